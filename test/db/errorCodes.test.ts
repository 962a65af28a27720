/**
 * The table of database error codes by meaning (src/db/errorCodes.ts): each code has exactly one
 * meaning, the predicates say what the table says, and the codes that are retried, sent elsewhere or
 * refused with 503 are those they were before the lists became one table.
 */
import t from 'tap';
import {
  CONSEQUENCES,
  ERROR_MEANINGS,
  type ErrorMeaning,
  isConnectionLost,
  isDatabaseUnavailable,
  isWriteOnClosedConnection,
  mayTryElsewhere,
  meaningOf,
} from '../../src/db/errorCodes.js';

const MEANINGS = Object.keys(CONSEQUENCES) as ErrorMeaning[];
const failure = (code: unknown) => Object.assign(new Error('failed'), { code });
const isClass = (key: string) => key.length === 2;
/** The codes the table names, a SQLSTATE class by one of its codes. */
const CODES = Object.keys(ERROR_MEANINGS).map((key) => (isClass(key) ? `${key}006` : key));

t.test('every code has exactly one meaning', async (t) => {
  for (const code of Object.keys(ERROR_MEANINGS)) {
    t.ok(MEANINGS.includes(ERROR_MEANINGS[code]!), `${code}: a known meaning`);
    if (isClass(code)) continue;
    t.equal(
      ERROR_MEANINGS[code.slice(0, 2)],
      undefined,
      `${code}: not also in a class the table names (a second meaning)`,
    );
  }
  for (const code of CODES) {
    const meanings = MEANINGS.filter((meaning) => meaningOf(failure(code)) === meaning);
    t.equal(meanings.length, 1, `${code}: one meaning`);
  }
});

t.test('the predicates agree with the table', async (t) => {
  for (const code of CODES) {
    const error = failure(code);
    const consequences = CONSEQUENCES[meaningOf(error)!];
    t.same(
      {
        retrySameSource: isConnectionLost(error),
        tryElsewhere: mayTryElsewhere(error),
        tellClientToRetry: isDatabaseUnavailable(error),
      },
      consequences,
      code,
    );
  }
  for (const other of [failure('22P02'), failure('42P01'), failure(undefined), new Error('x'), null, 'x']) {
    t.equal(meaningOf(other), undefined, 'a failure of the query itself has no meaning here');
    t.notOk(isConnectionLost(other) || mayTryElsewhere(other) || isDatabaseUnavailable(other));
  }
  t.equal(meaningOf(failure('toString')), undefined, 'only the table’s own keys');
});

t.test('the same codes as before the table: retried, elsewhere, 503', async (t) => {
  const codesWhere = (predicate: (error: unknown) => boolean) =>
    CODES.filter((code) => predicate(failure(code))).sort();
  const lost = [
    '57P01',
    '57P02',
    '57P03',
    'CONNECTION_CLOSED',
    'CONNECTION_DESTROYED',
    'CONNECTION_ENDED',
    'ECONNRESET',
    'EPIPE',
  ];
  const unreachable = ['CONNECT_TIMEOUT', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'];
  t.same(codesWhere(isConnectionLost), lost);
  t.same(codesWhere(mayTryElsewhere), [...lost, ...unreachable, '40001', 'ENOTFOUND'].sort());
  t.same(
    codesWhere(isDatabaseUnavailable),
    [...lost, ...unreachable, '08006', '25006', 'NO_SUITABLE_HOST'].sort(),
  );
});

t.test("postgres.js's write to a closed connection is a lost one, and only that TypeError", async (t) => {
  // The real one is thrown by the driver when a session dies under a command
  // (test/commands/connectionFailures.test.ts); the same message from anywhere else means nothing.
  const elsewhere = new TypeError("Cannot read properties of null (reading 'write')");
  t.equal(isWriteOnClosedConnection(elsewhere), false);
  t.equal(meaningOf(elsewhere), undefined);
  const driver = new TypeError("Cannot read properties of null (reading 'write')");
  driver.stack = `${driver.message}\n    at Immediate.nextWrite (file:///srv/app/node_modules/postgres/src/connection.js:255:22)`;
  t.equal(isWriteOnClosedConnection(driver), true);
  t.equal(meaningOf(driver), 'lost');
});

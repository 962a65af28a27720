/**
 * A database or Redis that cannot be reached or entered: every command that connects says which
 * setting points where, what failed and what to check, in two lines, and never shows the password.
 * Real failures: a closed port, a host name that cannot resolve, a wrong password, a missing database,
 * TLS against a server without it. And a connection that dies in the middle of a command (its session
 * ended, the server stopped or killed): one line that says so, exit 1, never a driver's stack.
 */
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { logged, outcome } from '../../testkit/gwapi.js';
import { startOwnPostgres } from '../../testkit/postgres.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { freshDatabase, testDatabaseUrl } from '../helpers/database.js';
import { startReplica } from '../helpers/serve.js';
import { until } from '../helpers/until.js';

const PASSWORD = 'n0t-to-be-5hown';

/** A port nothing listens on: taken from the kernel, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The test PostgreSQL's URL with `change` applied (a wrong password, another database…). */
function testServerUrl(change: (url: URL) => void): string {
  const url = new URL(testDatabaseUrl());
  change(url);
  return url.href;
}

/** Runs `args` with DATABASE_URL=`url`; checks the two lines and exit code, returns them. */
async function refused(t: Test, args: string[], url: string, secret: string): Promise<[string, string]> {
  const result = await runCli(args, { env: { DATABASE_URL: url, PORT: '0' }, input: '' });
  t.equal(result.code, 1, `${args.join(' ')}: exit code 1`);
  t.notMatch(result.stderr, secret, `${args.join(' ')}: the password is not shown`);
  t.notMatch(result.stderr, /unexpected error/);
  const lines = result.stderr.trimEnd().split('\n');
  t.equal(lines.length, 2, `${args.join(' ')}: two lines\n${result.stderr}`);
  return [lines[0]!, lines[1]!];
}

const COMMANDS = [
  ['migrate'],
  ['keys', 'list'],
  ['keys', 'create', '--name', 'x', '--all-tubes'],
  ['keys', 'revoke', 'key_0123456789ab'],
  ['import', 'registry', 'registry.json'],
  ['import', 'measurements', '-'],
  ['serve'],
  ['demo'],
];

t.test('a closed port, for every command that connects', async (t) => {
  const port = await closedPort();
  const url = `postgres://gwapi:${PASSWORD}@127.0.0.1:${port}/groundwater`;
  for (const args of COMMANDS) {
    const [what, check] = await refused(t, args, url, PASSWORD);
    t.equal(
      what,
      `gwapi: cannot connect to PostgreSQL at 127.0.0.1:${port} (DATABASE_URL, database "groundwater"): ` +
        'connection refused.',
    );
    t.equal(check, `  Is PostgreSQL running and listening on 127.0.0.1:${port}?`);
  }
});

t.test('several hosts, none of them a primary', async (t) => {
  const [first, second] = [await closedPort(), await closedPort()];
  const hosts = `127.0.0.1:${first},127.0.0.1:${second}`;
  const url = `postgres://gwapi:${PASSWORD}@${hosts}/groundwater?target_session_attrs=read-write`;
  const [what, check] = await refused(t, ['keys', 'list'], url, PASSWORD);
  t.equal(
    what,
    `gwapi: cannot connect to PostgreSQL at ${hosts} (DATABASE_URL, database "groundwater"): no host is ` +
      `read-write: 127.0.0.1:${first} not answering (connect ECONNREFUSED 127.0.0.1:${first}), ` +
      `127.0.0.1:${second} not answering (connect ECONNREFUSED 127.0.0.1:${second}).`,
  );
  t.equal(
    check,
    '  Is PostgreSQL running on the hosts in DATABASE_URL, and one of them the primary (is a standby being promoted)?',
  );
});

t.test('a host name that does not resolve', async (t) => {
  const [what, check] = await refused(
    t,
    ['migrate'],
    `postgres://gwapi:${PASSWORD}@nowhere.invalid/gw`,
    PASSWORD,
  );
  // Not found, or no answer where the machine has no DNS at all: both name the host.
  t.match(
    what,
    /^gwapi: cannot connect to PostgreSQL at nowhere\.invalid:5432 \(DATABASE_URL, database "gw"\): host name "nowhere\.invalid" (not found|could not be looked up)/,
  );
  t.match(check, /^ {2}Is the host name in DATABASE_URL right/);
});

t.test('a wrong password', async (t) => {
  const url = testServerUrl((u) => {
    u.password = PASSWORD;
  });
  const { hostname, port, username } = new URL(url);
  const [what, check] = await refused(t, ['keys', 'list'], url, PASSWORD);
  t.equal(
    what,
    `gwapi: cannot connect to PostgreSQL at ${hostname}:${port} (DATABASE_URL, database "postgres"): ` +
      `password authentication failed for user "${username}".`,
  );
  t.equal(check, '  Check the user and password in DATABASE_URL.');
});

t.test('a database that does not exist', async (t) => {
  const right = new URL(testDatabaseUrl()).password;
  const url = testServerUrl((u) => {
    u.pathname = '/no_such_database';
  });
  const [what, check] = await refused(t, ['migrate'], url, right);
  t.match(
    what,
    /\(DATABASE_URL, database "no_such_database"\): database "no_such_database" does not exist\.$/,
  );
  t.equal(
    check,
    '  Create it (createdb no_such_database) or correct DATABASE_URL, then run `gwapi migrate`.',
  );
});

t.test('TLS required from a server without it', async (t) => {
  const right = new URL(testDatabaseUrl()).password;
  const url = testServerUrl((u) => {
    u.searchParams.set('sslmode', 'require');
  });
  const { hostname, port } = new URL(url);
  const [what, check] = await refused(t, ['keys', 'list'], url, right);
  t.match(what, `at ${hostname}:${port} (DATABASE_URL, database "postgres"): TLS failed (`);
  t.equal(
    check,
    `  Does ${hostname}:${port} speak TLS, with a certificate valid for "${hostname}"? Check sslmode in DATABASE_URL.`,
  );
});

t.test('Redis: gwapi serve starts, limiting on its own, and says which setting points where', async (t) => {
  const db = await freshDatabase(t);
  const port = await closedPort();
  const cases = [
    [
      `redis://gwapi:${PASSWORD}@127.0.0.1:${port}`,
      `at 127.0.0.1:${port} (REDIS_URL): connection refused. Is Redis running and listening on 127.0.0.1:${port}?`,
    ],
    [
      `redis://:${PASSWORD}@nowhere.invalid:6379`,
      'at nowhere.invalid:6379 (REDIS_URL): host name "nowhere.invalid"',
    ],
  ];
  for (const [redisUrl, expected] of cases) {
    const replica = await startReplica(t, { DATABASE_URL: db.url, REDIS_URL: redisUrl });
    await replica.stop();
    const [line] = logged(replica, /Redis is unavailable/);
    t.match(line?.msg, `limits: Redis is unavailable (cannot connect to Redis ${expected}`);
    t.notMatch(JSON.stringify(replica.logs), PASSWORD, 'the password is not logged');
  }
});

/** How long a `gwapi` process may take to reach its first statement on a busy machine. */
const STARTED_WITHIN_MS = 60_000;

/** Arbitrary but fixed in src/db/migrate.ts: the runner lock of `gwapi migrate`. */
const MIGRATION_LOCK = 0x6777617069;

/** The one line of a command whose connection was lost, and its exit code 1. */
function saysLost(t: Test, what: string, result: { code: number | null; stderr: string }): void {
  t.equal(result.code, 1, `${what}: exit code 1`);
  t.match(
    result.stderr,
    /^gwapi: connection to PostgreSQL at 127\.0\.0\.1:\d+ \(DATABASE_URL, database "\w+"\) lost: [^\n]+\. What the command had not committed is rolled back; run it again once PostgreSQL answers\.\n$/,
    `${what}: one line\n${result.stderr}`,
  );
  t.notMatch(result.stderr, /TypeError|unexpected error/, `${what}: no driver error`);
}

/**
 * Waits until the session of `applicationName` whose last statement is like `statement` waits on
 * `waitEvent` ('Lock', or 'Client' for the client's next message), then ends it (FATAL 57P01).
 */
async function terminateWhen(
  sql: Sql,
  applicationName: string,
  statement: string,
  waitEvent: 'Lock' | 'Client',
): Promise<void> {
  const [backend] = await until(
    `${applicationName} waits (${waitEvent}) in ${statement}`,
    () => sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where application_name = ${applicationName} and query ilike ${statement}
        and wait_event_type = ${waitEvent}`,
    (rows) => rows.length > 0,
    STARTED_WITHIN_MS,
  );
  await sql`select pg_terminate_backend(${backend!.pid})`;
}

t.test('a session ended in the middle of a command: one line, exit 1', async (t) => {
  const db = await freshDatabase(t);
  const env = { DATABASE_URL: db.url };
  const [tube] = await addWell(db.sql, 'Well', [{ number: '1' }]);
  await addRegularSeries(db.sql, tube!.id, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z', '1 hour');
  const { keyId } = await addKey(db.sql, { allTubes: true });
  // The test's own session holds what each command needs, so the command waits where it is ended.
  const holder = await db.sql.reserve();
  t.teardown(() => holder.release());

  t.test('gwapi migrate, waiting for the runner lock on its reserved session', async (t) => {
    await holder`select pg_advisory_lock(${MIGRATION_LOCK})`;
    t.teardown(() => holder`select pg_advisory_unlock(${MIGRATION_LOCK})`);
    const run = outcome(spawnCli(['migrate'], { env }));
    // Between two polls for the lock: the next poll is written to a closed connection.
    await terminateWhen(db.sql, 'gwapi migrate', '%pg_try_advisory_lock%', 'Client');
    saysLost(t, 'migrate', await run);
  });

  const interval = ['--from', '2024-01-01T00:00:00Z', '--to', '2024-01-02T00:00:00Z'];
  const waitingForATable = [
    { table: 'api_keys', args: ['keys', 'revoke', keyId], statement: '%update api_keys%' },
    // Its statements run in one transaction (src/db/transaction.ts).
    {
      table: 'measurements',
      args: ['measurements', 'status', 'rejected', '--all-tubes', ...interval],
      statement: '%',
    },
  ];
  for (const { table, args, statement } of waitingForATable) {
    const command = args.slice(0, 2).join(' ');
    t.test(`gwapi ${command}, waiting for a lock on ${table}`, async (t) => {
      await holder`begin`;
      await holder`lock table ${holder(table)} in access exclusive mode`;
      t.teardown(() => holder`rollback`);
      const run = outcome(spawnCli(args, { env }));
      await terminateWhen(db.sql, `gwapi ${command}`, statement, 'Lock');
      saysLost(t, command, await run);
    });
  }

  t.test('gwapi import measurements, copying from standard input', async (t) => {
    const child = spawnCli(['import', 'measurements', '-'], { env });
    child.stdin.write(`tubeIdentifier,observedAt,value\n${tube!.identifier},2024-02-01T00:00:00Z,1.5\n`);
    // Its transaction waits for more input: a session that is ended meanwhile.
    await terminateWhen(db.sql, 'gwapi import measurements', 'copy%', 'Client');
    const run = outcome(child, `${tube!.identifier},2024-02-01T01:00:00Z,1.6\n`);
    saysLost(t, 'import measurements', await run);
    t.same(
      await db.sql`select 1 from measurements where observed_at >= '2024-02-01'`,
      [],
      'nothing of the file is imported',
    );
  });
});

t.test('the server stopped or killed under gwapi migrate: one line, exit 1', async (t) => {
  const own = await startOwnPostgres(t);
  for (const end of ['stop', 'kill'] as const) {
    const holder = await own.admin.reserve();
    await holder`select pg_advisory_lock(${MIGRATION_LOCK})`;
    const run = outcome(spawnCli(['migrate'], { env: { DATABASE_URL: own.url } }));
    await until(
      'gwapi migrate polls for the runner lock',
      () => holder`
        select 1 from pg_stat_activity
        where application_name = 'gwapi migrate' and query like '%pg_try_advisory_lock%'`,
      (rows) => rows.length > 0,
      STARTED_WITHIN_MS,
    );
    await own[end]();
    saysLost(t, `migrate, server ${end === 'stop' ? 'stopped' : 'killed'}`, await run);
    await own.start();
  }
});

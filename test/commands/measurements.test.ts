/**
 * `gwapi measurements status|remove` as the operator runs them: what they print, their refusals (each
 * problem named, exit 1, nothing changed), and the confirmation a removal asks for on a terminal.
 */
import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import t, { type Test } from 'tap';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { GWAPI_CLI } from '../../testkit/gwapi.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';
import { OTHER, TUBE } from '../helpers/importFixtures.js';

const UNKNOWN = '99999999-2fa1-11d2-883f-0016d3cca427';
const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-01-01T00:05:00+00:00';

async function setUp(t: Test) {
  const db = await freshDatabase(t);
  await upsertRegistry(db.sql, [
    {
      name: 'W',
      tubes: [
        { identifier: TUBE, number: '1' },
        { identifier: OTHER, number: '2' },
      ],
    },
  ]);
  await db.sql`
    insert into measurements (tube_id, observed_at, value, status)
    select t.id, ${FROM}::timestamptz + m * interval '1 minute', m, case when m < 2 then 0 else 1 end
    from tubes t, generate_series(0, 9) m`;
  const gwapi = (args: string[]) => runCli(args, { env: { DATABASE_URL: db.url } });
  const rows = async () =>
    (
      await db.sql<{ row: string }[]>`
        select t.number || ' ' || extract(minute from m.observed_at) || ' ' || m.status as row
        from measurements m join tubes t on t.id = m.tube_id order by t.number, m.observed_at`
    ).map((r) => r.row);
  return { db, gwapi, rows };
}

t.test('status: sets the status over [--from, --to), prints how many changed', async (t) => {
  const { gwapi, rows } = await setUp(t);
  const set = (status: string, ...tubes: string[]) =>
    gwapi(['measurements', 'status', status, ...tubes, '--from', FROM, '--to', TO]);
  t.same(await set('approved', '--tube', TUBE.toUpperCase()), {
    code: 0,
    stdout: 'set 3 measurements to approved\n',
    stderr: '',
  });
  t.same(await set('approved', '--tube', TUBE), {
    code: 0,
    stdout:
      'set 0 measurements to approved (none from 2024-01-01T00:00:00Z to 2024-01-01T00:05:00Z had another status)\n',
    stderr: '',
  });
  t.same((await set('rejected', '--tube', TUBE, OTHER)).stdout, 'set 10 measurements to rejected\n');
  t.same((await set('provisional', '--all-tubes')).stdout, 'set 10 measurements to provisional\n');
  t.same(
    (await rows()).filter((row) => !row.endsWith(' 1')),
    [],
    'every one provisional: those in the interval set so, the others as they were',
  );
});

t.test('refusals: each problem named, exit 1, nothing changed', async (t) => {
  const { db, gwapi, rows } = await setUp(t);
  const before = await rows();
  const [versions] = await db.sql`select sum(series_version)::int as v from tubes`;
  const cases: [string[], string][] = [
    [
      ['status', 'checked', '--tube', TUBE, '--from', FROM, '--to', TO],
      "gwapi: command-argument value 'checked' is invalid for argument 'status'. Allowed choices are approved, provisional, rejected.\n",
    ],
    [
      ['status', 'approved', '--tube', TUBE, UNKNOWN, '--from', FROM, '--to', TO],
      `gwapi: unknown tube identifier: ${UNKNOWN}\n`,
    ],
    [
      ['status', 'approved', '--tube', 'tube-1', '--from', '2024-01-01', '--to', TO],
      'gwapi: --tube: not a tube identifier (expected a UUID): "tube-1"; --from: must be an RFC 3339 date-time ' +
        'with a UTC offset, such as 2024-01-01T00:00:00Z or 2024-01-01T02:00:00+02:00\n',
    ],
    [
      ['status', 'approved', '--tube', TUBE, '--from', TO, '--to', FROM],
      'gwapi: --to: must be later than --from (the interval includes --from and excludes --to)\n',
    ],
    [
      ['status', 'approved', '--tube', TUBE, '--all-tubes', '--from', FROM, '--to', TO],
      'gwapi: --tube and --all-tubes: give one or the other\n',
    ],
    [
      ['status', 'approved', '--from', FROM, '--to', TO],
      'gwapi: --tube: name at least one tube (or give --all-tubes)\n',
    ],
    [
      ['status', 'approved', '--all-tubes', '--from', FROM],
      "gwapi: required option '--to <time>' not specified\n",
    ],
    [
      ['remove', '--tube', UNKNOWN, '--from', FROM, '--to', TO, '--yes'],
      `gwapi: unknown tube identifier: ${UNKNOWN}\n`,
    ],
    [
      ['remove', '--tube', TUBE, '--from', FROM, '--to', '2024-02-30T00:00:00Z', '--yes'],
      'gwapi: --to: day 30 does not exist in 2024-02\n',
    ],
    [
      ['remove', '--tube', TUBE, '--from', FROM, '--to', TO],
      `gwapi: refusing to remove 5 measurements of tube ${TUBE} from 2024-01-01T00:00:00Z to ` +
        '2024-01-01T00:05:00Z without confirmation: standard input is not a terminal (give --yes to remove ' +
        'without asking)\n',
    ],
  ];
  for (const [args, stderr] of cases) {
    t.same(await gwapi(['measurements', ...args]), { code: 1, stdout: '', stderr }, args.join(' '));
  }
  t.same(await rows(), before);
  t.same(await db.sql`select sum(series_version)::int as v from tubes`, [versions]);
  t.same(await db.sql`select count(*)::int as n from measurement_corrections`, [{ n: 0 }]);
});

t.test('remove --yes: removes one tube over the interval, prints how many', async (t) => {
  const { gwapi, rows } = await setUp(t);
  const remove = () => gwapi(['measurements', 'remove', '--tube', TUBE, '--from', FROM, '--to', TO, '--yes']);
  t.same(await remove(), {
    code: 0,
    stdout: `removed 5 measurements of tube ${TUBE} from 2024-01-01T00:00:00Z to 2024-01-01T00:05:00Z\n`,
    stderr: '',
  });
  t.same(
    (await rows()).filter((row) => row.startsWith('1 ')),
    ['1 5 1', '1 6 1', '1 7 1', '1 8 1', '1 9 1'],
  );
  t.equal((await rows()).length, 15, "the other tube's are all there");
  t.same(
    (await remove()).stdout,
    `removed 0 measurements of tube ${TUBE} from 2024-01-01T00:00:00Z to 2024-01-01T00:05:00Z\n`,
  );
});

/** `gwapi ARGS` on a terminal (script(1) gives it one), answering `answer` to its question. */
function onTerminal(args: string[], env: Record<string, string>, answer: string) {
  const command = ['node', '--import', 'tsx', GWAPI_CLI, ...args].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('[y/N] ') && !child.stdin.writableEnded) child.stdin.end(`${answer}\n`);
  });
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    // The terminal's line ends and readline's cursor moves are not what the operator reads.
    child.on('close', (code) =>
      resolve({ code, output: stripVTControlCharacters(output).replaceAll('\r', '') }),
    ),
  );
}

t.test('remove on a terminal: asks, and removes only on yes', async (t) => {
  const { db, rows } = await setUp(t);
  const args = ['measurements', 'remove', '--tube', OTHER, '--from', FROM, '--to', TO];
  const question =
    `remove 5 measurements of tube ${OTHER} from 2024-01-01T00:00:00Z to 2024-01-01T00:05:00Z? ` +
    'This cannot be undone. [y/N] ';
  const declined = await onTerminal(args, { DATABASE_URL: db.url }, 'n');
  t.equal(declined.code, 1);
  t.match(declined.output, `${question}n\ngwapi: nothing removed\n`);
  t.equal((await rows()).length, 20);
  const confirmed = await onTerminal(args, { DATABASE_URL: db.url }, 'y');
  t.equal(confirmed.code, 0);
  t.match(confirmed.output, `${question}y\nremoved 5 measurements of tube ${OTHER}`);
  t.equal((await rows()).length, 15);
});

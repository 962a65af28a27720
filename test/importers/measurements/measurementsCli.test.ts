/** `gwapi import measurements FILE|-` as the operator runs it: a real process on a fresh database. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { runCli } from '../../helpers/cli.js';
import { freshDatabase } from '../../helpers/database.js';

const TUBE = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const HEADER = 'tubeIdentifier,observedAt,value\n';
const REPORT =
  /^imported (\S+) rows? from (\S+): (\S+) inserted, (\S+) updated, (\S+) unchanged in \d+\.\d s \([\d,]+ rows\/s\)\n$/;

async function setUp(t: Test) {
  const db = await freshDatabase(t);
  await upsertRegistry(db.sql, [{ name: 'W', tubes: [{ identifier: TUBE, number: '1' }] }]);
  const gwapi = (file: string, input?: string | Buffer) =>
    runCli(['import', 'measurements', file], { env: { DATABASE_URL: db.url }, input });
  return { db, gwapi };
}

t.test('a file: rows imported, inserted/updated/unchanged and the rate; exit 0', async (t) => {
  const { db, gwapi } = await setUp(t);
  const file = join(t.testdir(), 'data.csv');
  await writeFile(file, `${HEADER}${TUBE},2024-01-01T00:00:00Z,1.5\n${TUBE},2024-01-01T00:15:00Z,1.25\n`);
  const first = await gwapi(file);
  t.equal(first.code, 0);
  t.equal(first.stderr, '', 'no progress line when standard error is not a terminal');
  t.same(REPORT.exec(first.stdout)?.slice(1), ['2', file, '2', '0', '0']);

  await writeFile(
    file,
    `${HEADER}${TUBE},2024-01-01T00:00:00Z,1.5\n${TUBE},2024-01-01T01:15:00+01:00,1.75\n`,
  );
  const second = await gwapi(file);
  t.same(REPORT.exec(second.stdout)?.slice(1), ['2', file, '0', '1', '1']);
  t.same(
    (
      await db.sql`select measurement_value(value, value_thousandths) as value from measurements order by observed_at`
    ).map((r) => r.value),
    [1.5, 1.75],
  );
});

t.test('standard input (-): errors are named stdin, exit 1, nothing imported', async (t) => {
  const { db, gwapi } = await setUp(t);
  const result = await gwapi('-', `${HEADER}${TUBE},2024-01-01T00:00:00Z,1\n${TUBE},2024-01-01,2\n`);
  t.same(result, {
    code: 1,
    stdout: '',
    stderr:
      'stdin:3: observedAt: must be an RFC 3339 date-time with a UTC offset, such as 2024-01-01T00:00:00Z or 2024-01-01T02:00:00+02:00\n' +
      'gwapi: stdin: 1 error; nothing was imported\n',
  });
  t.same(await db.sql`select * from measurements`, []);
});

t.test('more than 20 errors: 20 lines, the count of the rest, one summary line', async (t) => {
  const { gwapi } = await setUp(t);
  const rows = Array.from(
    { length: 1234 + 20 },
    (_, i) => `${TUBE},2024-01-01T00:00:00.${String(i).padStart(6, '0')}Z,x`,
  );
  const result = await gwapi('-', `${HEADER}${rows.join('\n')}\n`);
  const lines = result.stderr.trimEnd().split('\n');
  t.equal(result.code, 1);
  t.equal(lines.length, 22);
  t.match(lines[0], /^stdin:2: value: not a decimal number/);
  t.match(lines[19], /^stdin:21: value: not a decimal number/);
  t.equal(lines[20], '… and 1,234 more errors');
  t.equal(lines[21], 'gwapi: stdin: 1,254 errors; nothing was imported');
});

t.test('a file that cannot be read: one line, exit 1', async (t) => {
  const { gwapi } = await setUp(t);
  t.same(await gwapi('/nonexistent/data.csv'), {
    code: 1,
    stdout: '',
    stderr: 'gwapi: cannot read /nonexistent/data.csv: no such file\n',
  });
});

t.test('streams a few hundred thousand rows through standard input', async (t) => {
  const { db, gwapi } = await setUp(t);
  const rows = 300_000;
  const start = Date.UTC(2024, 0, 1) / 1000;
  const lines = [HEADER.trimEnd()];
  // Cents, so the expected sum is exact: value = (i mod 1000) / 100.
  for (let i = 0; i < rows; i++) {
    lines.push(
      `${TUBE},${new Date((start + i * 60) * 1000).toISOString().replace('.000Z', 'Z')},${(i % 1000) / 100}`,
    );
  }
  const result = await gwapi('-', Buffer.from(`${lines.join('\n')}\n`));
  t.equal(result.stderr, '');
  t.same(REPORT.exec(result.stdout)?.slice(1), ['300,000', 'stdin', '300,000', '0', '0']);
  const [stats] = await db.sql<{ count: string; cents: string; first: Date; last: Date }[]>`
    select count(*), sum(round(measurement_value(value, value_thousandths) * 100)) as cents, min(observed_at) as first, max(observed_at) as last
    from measurements`;
  t.equal(stats?.count, String(rows));
  t.equal(Number(stats?.cents), 300 * ((999 * 1000) / 2));
  t.equal(stats?.first.toISOString(), '2024-01-01T00:00:00.000Z');
  t.equal(stats?.last.getTime(), (start + (rows - 1) * 60) * 1000);
  // The command vacuums after commit: every page all-visible (index-only scans), statistics current.
  const [table] = await db.sql<{ pages: number; visible: number; tuples: number }[]>`
    select relpages as pages, relallvisible as visible, reltuples as tuples
    from pg_class where relname = 'measurements'`;
  t.ok(table && table.pages > 0 && table.visible === table.pages, 'the visibility map is set');
  t.equal(table?.tuples, rows, 'analyzed');
});

t.test('SYNC_HISTORY_DAYS: the import prunes older change history, and only when set', async (t) => {
  const { db } = await setUp(t);
  const file = join(t.testdir(), 'data.csv');
  const gwapi = (minute: number, env: Record<string, string> = {}) =>
    writeFile(file, `${HEADER}${TUBE},2024-01-01T00:${String(minute).padStart(2, '0')}:00Z,1\n`).then(() =>
      runCli(['import', 'measurements', file], { env: { DATABASE_URL: db.url, ...env } }),
    );
  const history = async () =>
    (
      await db.sql<
        { n: number }[]
      >`select extract(minute from first_at)::int as n from measurement_changes order by 1`
    ).map((r) => r.n);
  t.equal((await gwapi(0)).code, 0);
  await db.sql`update measurement_changes set recorded_at = now() - interval '3 days'`;
  t.equal((await gwapi(1)).code, 0);
  t.same(await history(), [0, 1], 'unset: everything kept');
  t.equal((await gwapi(2, { SYNC_HISTORY_DAYS: '2' })).code, 0);
  t.same(await history(), [1, 2], 'the import of 3 days ago pruned');
  const [state] = await db.sql`select pruned_through > '0'::xid8 as pruned from sync_state`;
  t.equal(state?.pruned, true, 'and the horizon raised');
});

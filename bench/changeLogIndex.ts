/**
 * Which index `pruneChangeLog` (src/importers/measurements/changeLog.ts) should delete by: none, a
 * btree or a BRIN on measurement_changes.recorded_at (sql/007). A change log of DAYS days with
 * ROWS_PER_DAY rows a day in hourly imports, then CHURN_DAYS more days of the steady state: each hourly
 * import adds its rows and prunes what fell out of the history, as `gwapi import` does. Reports the
 * index's size and build time, and the prune's time and pages read, fresh and after the churn (rows
 * recycled into freed pages widen BRIN ranges, which are never narrowed again).
 *
 *   node --import tsx bench/changeLogIndex.ts [DAYS [ROWS_PER_DAY [CHURN_DAYS]]]   (defaults 90 10000 3)
 */
import type { Sql } from '../src/db/connect.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { count, machineLine, mb, median, ms, printTable } from '../testkit/report.js';

requirePrerequisites([throwawayPostgres]);

const DAYS = Number(process.argv[2] ?? 90);
const ROWS_PER_DAY = Number(process.argv[3] ?? 10_000);
const CHURN_DAYS = Number(process.argv[4] ?? 3);
const START = Date.parse('2026-01-01T00:00:00Z');
const HOUR_MS = 3_600_000;

const variants = {
  none: '',
  btree: 'create index changes_recorded_at on measurement_changes (recorded_at)',
  brin: 'create index changes_recorded_at on measurement_changes using brin (recorded_at)',
};

/** One hourly import's change rows, recorded at `hour` (hours since START). */
const importHour = (sql: Sql, hour: number) => sql`
  insert into measurement_changes (tube_id, first_at, last_at, recorded_at)
  select n, t - interval '1 hour', t, t
  from generate_series(1, ${Math.round(ROWS_PER_DAY / 24)}) n,
       (select ${new Date(START + hour * HOUR_MS)}::timestamptz as t) at`;

/** The prune of `gwapi import` at `hour`: its time and the shared buffers it touched. */
async function prune(sql: Sql, hour: number): Promise<{ ms: number; pages: number }> {
  const cutoff = new Date(START + (hour - DAYS * 24) * HOUR_MS);
  type Plan = { 'QUERY PLAN': [{ Plan: Record<string, number>; 'Execution Time': number }] };
  const [plan] = await sql.unsafe<Plan[]>(
    `explain (analyze, buffers, format json)
     delete from measurement_changes where recorded_at < '${cutoff.toISOString()}'`,
  );
  const root = plan!['QUERY PLAN'][0];
  return {
    ms: root['Execution Time'],
    pages: root.Plan['Shared Hit Blocks']! + root.Plan['Shared Read Blocks']!,
  };
}

const pg = await startDatabaseServer();
try {
  console.log(`Change log index benchmark — ${await machineLine()}\n${pg.description}`);
  console.log(
    `${DAYS} days × ${count(ROWS_PER_DAY)} rows (hourly imports), then ${CHURN_DAYS} days of churn\n`,
  );
  const rows: string[][] = [];
  for (const [name, create] of Object.entries(variants)) {
    const { sql } = await pg.database(`bench_changelog_${name}`);
    await sql`drop index if exists measurement_changes_recorded_at`;
    for (let hour = 0; hour < DAYS * 24; hour++) await importHour(sql, hour);
    await sql`vacuum analyze measurement_changes`;
    const started = performance.now();
    if (create) await sql.unsafe(create);
    const buildMs = performance.now() - started;
    const [{ size }] = (await sql`
      select coalesce(pg_relation_size(to_regclass('changes_recorded_at')), 0)::float8 as size`) as [
      { size: number },
    ];
    const fresh: { ms: number; pages: number }[] = [];
    const churned: { ms: number; pages: number }[] = [];
    for (let hour = DAYS * 24; hour < (DAYS + CHURN_DAYS) * 24; hour++) {
      await importHour(sql, hour);
      const result = await prune(sql, hour);
      (hour < (DAYS + 1) * 24 ? fresh : churned).push(result);
      // Autovacuum's part, so freed pages are reused as in production.
      if (hour % 6 === 0) await sql`vacuum measurement_changes`;
    }
    rows.push([
      name,
      create ? ms(buildMs) : '',
      create ? mb(size / 1024 / 1024) : '',
      ms(median(fresh.map((p) => p.ms))),
      count(median(fresh.map((p) => p.pages))),
      ms(median(churned.slice(-24).map((p) => p.ms))),
      count(median(churned.slice(-24).map((p) => p.pages))),
    ]);
    await pg.dropDatabase(`bench_changelog_${name}`);
  }
  printTable(
    ['index', 'build', 'size', 'prune (day 1)', 'pages', `prune (day ${CHURN_DAYS})`, 'pages'],
    rows,
  );
} finally {
  await pg.stop();
}

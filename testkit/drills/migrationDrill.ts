/**
 * The migration drill: the previous release (testkit/previousRelease.ts, from a git worktree) serves the
 * drill's load through HAProxy from two replicas on its own schema, while imports write the change log
 * and prune it; then this release's `gwapi migrate` applies what the previous release lacks (007–012,
 * among them 009's columns on `measurements` and the change log, and 011's rollups). What must hold (`problems`; none is a PASS): no request
 * and no write fails, no session waits for a lock longer than the migrations' lock_timeout (sampled from
 * pg_locks), and the previous release stays up and ready on the migrated schema.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type Sql } from '../../src/db/connect.js';
import { MIGRATION_LOCK_TIMEOUT_MS, pendingMigrations } from '../../src/db/migrate.js';
import type { DatabaseServer } from '../databaseServer.js';
import { outcome, spawnGwapi } from '../gwapi.js';
import { LOCK_WAIT_SLACK_MS, type LockWait, sampleLockWaits } from '../lockWaits.js';
import { checkoutRelease, PREVIOUS_RELEASE } from '../previousRelease.js';
import { count, ms, printTable } from '../report.js';
import { startApiFleet } from './apiFleet.js';
import { addDrillFixture, drillTarget } from './drillFixture.js';
import { steadyLoad } from './drillLoad.js';
import { LOAD_HEADER, loadRow } from './drillReport.js';
import { type DrillRunOptions, phaseClock } from './phases.js';
import type { PhaseReport } from './rollingDrill.js';

export interface MigrationDrillOptions extends DrillRunOptions {
  /** An empty database: the previous release migrates it to its own schema first. */
  databaseUrl: string;
  redisUrl: string;
  keys: number;
  /** Rows of change history before the migration: what 007's index build and 009's columns meet. */
  changeRows: number;
}

export interface ChangeLogWrites {
  count: number;
  failed: string[];
  slowestMs: number;
}

export interface MigrationDrillReport {
  release: string;
  phases: PhaseReport[];
  /** What `gwapi migrate` printed (its attempts that hit lock_timeout apart), and how long it ran. */
  migrate: { code: number | null; output: string; retries: string[]; ms: number };
  longestLockWait: LockWait;
  lockTimeoutMs: number;
  writes: ChangeLogWrites;
  problems: string[];
}

const REPLICAS = 2;
/** SYNC_HISTORY_DAYS of the imports' prune; the history reaches a day further back. */
const HISTORY_DAYS = 30;
const WRITE_PERIOD_MS = 200;

export async function runMigrationDrill(options: MigrationDrillOptions): Promise<MigrationDrillReport> {
  const { log = () => {} } = options;
  const release = await checkoutRelease();
  const sql = connect(options.databaseUrl, { max: 4, applicationName: 'gwapi drill' });
  let stopFleet = async () => {};
  try {
    const old = await outcome(
      spawnGwapi(['migrate'], { root: release.root, env: { DATABASE_URL: options.databaseUrl } }),
    );
    if (old.code !== 0) throw new Error(`gwapi migrate of ${PREVIOUS_RELEASE.version} failed: ${old.stderr}`);
    const fixture = await addDrillFixture(sql, { keys: options.keys, holders: 0 });
    await addChangeHistory(sql, options.changeRows);
    await previousReleasePrune(sql, HISTORY_DAYS);
    log(
      `${PREVIOUS_RELEASE.version} schema, ${options.changeRows} change rows (${release.modules} node_modules)`,
    );

    const fleet = await startApiFleet({
      replicas: REPLICAS,
      databaseUrl: options.databaseUrl,
      redisUrl: options.redisUrl,
      folder: options.folder,
      root: release.root,
      owner: options.owner,
      watch: options.watch,
    });
    stopFleet = () => fleet.stop();

    const load = steadyLoad(drillTarget(fleet.haproxy.base, fixture), fixture.loadKeys, options.periodMs);
    const writer = changeLogWriter(sql);
    const { windows, phase } = phaseClock(log);
    const settle = async () => {
      await sleep(options.settleMs);
      return undefined;
    };

    await phase('before', settle);
    const pending = (await pendingMigrations(sql)).map((m) => String(m.version).padStart(3, '0')).join(', ');
    let migrate: MigrationDrillReport['migrate'] = { code: null, output: '', retries: [], ms: 0 };
    let longestLockWait: LockWait = { ms: 0, what: '' };
    await phase(`gwapi migrate (${pending}) under ${PREVIOUS_RELEASE.version}`, async () => {
      const waits = sampleLockWaits(sql);
      const started = performance.now();
      const result = await outcome(spawnGwapi(['migrate'], { env: { DATABASE_URL: options.databaseUrl } }));
      const lines = `${result.stdout}${result.stderr}`.trim().split('\n');
      const retry = (line: string) => /gave up waiting for a lock/.test(line);
      migrate = {
        code: result.code,
        output: lines.filter((line) => !retry(line)).join('\n'),
        retries: lines.filter(retry),
        ms: performance.now() - started,
      };
      longestLockWait = await waits.stop();
      return undefined;
    });
    await phase('after', settle);
    await load.stop();
    const writes = await writer.stop();
    const phases = windows.map((window) => ({ ...window, requests: load.between(window.from, window.to) }));

    const problems: string[] = [];
    for (const { phase, requests } of phases) {
      if (requests.length === 0) problems.push(`${phase}: no request ran`);
      const failed = requests.filter((r) => r.outcome === 'failed');
      if (failed.length > 0)
        problems.push(`${phase}: ${failed.length} requests failed (${failed[0]!.cause})`);
    }
    if (migrate.code !== 0 || !/applied 007_.*, 012_/.test(migrate.output))
      problems.push(`gwapi migrate: ${migrate.output}`);
    if ((await pendingMigrations(sql)).length > 0) problems.push('migrations still pending');
    if (!(longestLockWait.ms <= MIGRATION_LOCK_TIMEOUT_MS + LOCK_WAIT_SLACK_MS)) {
      problems.push(`a lock wait of ${Math.round(longestLockWait.ms)} ms (${longestLockWait.what})`);
    }
    if (writes.failed.length > 0)
      problems.push(`${writes.failed.length} change log writes failed: ${writes.failed[0]}`);
    await fleet
      .untilStatus(fleet.names, 'UP', 5000)
      .catch(() => problems.push(`${PREVIOUS_RELEASE.version} not UP`));
    return {
      release: `${PREVIOUS_RELEASE.version} (${PREVIOUS_RELEASE.commit.slice(0, 7)})`,
      phases,
      migrate,
      longestLockWait,
      lockTimeoutMs: MIGRATION_LOCK_TIMEOUT_MS,
      writes,
      problems,
    };
  } finally {
    await stopFleet();
    await sql.end({ timeout: 1 });
    await release.remove();
  }
}

/** `rows` change rows recorded over the history and a day before it, oldest first, as imports append them. */
async function addChangeHistory(sql: Sql, rows: number): Promise<void> {
  await sql`
    insert into measurement_changes (tube_id, first_at, last_at, recorded_at)
    select (select min(id) from tubes), t - interval '1 hour', t, t
    from generate_series(1, ${rows}) n,
         lateral (select now() - make_interval(days => ${HISTORY_DAYS + 1}) * (1 - n::float8 / ${rows}) as t) at`;
  await sql`vacuum analyze measurement_changes`;
}

/**
 * The prune of the previous release's imports, whose schema this is until the migration: the change log
 * older than `days` deleted, and the tokens' horizon raised over it (this release's pruneChangeLog also
 * prunes the corrections, a table the previous schema lacks).
 */
const previousReleasePrune = (sql: Sql, days: number) => sql`
  with pruned as (
    delete from measurement_changes where recorded_at < now() - make_interval(days => ${days}) returning xid
  )
  update sync_state set pruned_through = greatest(pruned_through, (select xid from pruned order by xid desc limit 1))
  where exists (select from pruned)`;

/** What each import of the previous release does to the change log: it appends its rows, then prunes. */
function changeLogWriter(sql: Sql) {
  const writes: ChangeLogWrites = { count: 0, failed: [], slowestMs: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        await sql`
          insert into measurement_changes (tube_id, first_at, last_at)
          select min(id), now() - interval '1 hour', now() from tubes`;
        await previousReleasePrune(sql, HISTORY_DAYS);
        writes.count++;
      } catch (error) {
        writes.failed.push((error as Error).message);
      }
      writes.slowestMs = Math.max(writes.slowestMs, performance.now() - started);
      await sleep(WRITE_PERIOD_MS);
    }
  })();
  return {
    async stop(): Promise<ChangeLogWrites> {
      running = false;
      await loop;
      return writes;
    },
  };
}

/** The drill's report: a table of phases (as the rolling drill's) and a line on the migration. */
export function describeMigrationDrill(report: MigrationDrillReport) {
  const { migrate, longestLockWait, writes } = report;
  return {
    header: LOAD_HEADER,
    rows: report.phases.map(loadRow),
    summary:
      `${report.release} served from a git worktree; \`gwapi migrate\` ran ${ms(migrate.ms)}: ${migrate.output}; ` +
      `${migrate.retries.length} attempts gave up on lock_timeout and were retried${migrate.retries.length ? ` (${migrate.retries[0]})` : ''}. ` +
      `Longest lock wait of any session: ${ms(longestLockWait.ms)}${longestLockWait.what ? ` (${longestLockWait.what})` : ''}, ` +
      `lock_timeout ${ms(report.lockTimeoutMs)}. Change log writes and prunes: ${count(writes.count)}, ` +
      `${writes.failed.length} failed, slowest ${ms(writes.slowestMs)}.`,
  };
}

/** `npm run drill`'s migration phase on a database of its own of `pg`: prints its report, returns its problems. */
export async function printedMigrationDrill(
  pg: DatabaseServer,
  options: Pick<MigrationDrillOptions, 'redisUrl' | 'folder' | 'settleMs' | 'periodMs' | 'keys' | 'log'>,
): Promise<string[]> {
  const changeRows = 3_000_000;
  console.log(
    `\nMigration under load: 2 replicas of ${PREVIOUS_RELEASE.version}, the same load, imports writing and ` +
      `pruning the change log (${count(changeRows)} rows) every ${WRITE_PERIOD_MS} ms; ${options.settleMs / 1000} s ` +
      `before and after \`gwapi migrate\`\n`,
  );
  const report = await runMigrationDrill({
    ...options,
    databaseUrl: await pg.emptyDatabase('drill_migration'),
    changeRows,
  });
  const { header, rows, summary } = describeMigrationDrill(report);
  printTable(header, rows);
  console.log(summary);
  return report.problems;
}

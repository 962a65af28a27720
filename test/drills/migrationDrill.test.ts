/**
 * The migration drill (testkit/drills/migrationDrill.ts), shortened: the previous release serves the load
 * from a git worktree through HAProxy while imports write the change log, and this release's
 * `gwapi migrate` applies 007–012 under it: no request and no write fails, no lock wait exceeds the
 * migrations' lock_timeout, and the previous release stays up. `npm run drill` is the long run.
 */
import t from 'tap';
import { runMigrationDrill } from '../../testkit/drills/migrationDrill.js';
import { captureProcess } from '../../testkit/outputCapture.js';
import { startRedis } from '../../testkit/redis.js';
import { freshDatabase } from '../helpers/database.js';
import { unlessInstalled } from '../helpers/installed.js';

t.test(
  'every migration since the previous release applied under load while it serves',
  { skip: unlessInstalled('haproxy', 'haproxy') },
  async (t) => {
    const db = await freshDatabase(t, { migrated: false });
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const report = await runMigrationDrill({
      databaseUrl: db.url,
      redisUrl: redis.url,
      folder: t.testdir(),
      settleMs: 2000,
      periodMs: 500,
      keys: 16,
      changeRows: 100_000,
      owner: t,
      watch: captureProcess,
    });
    t.same(report.problems, [], 'nothing that must hold was broken');
    t.equal(report.migrate.code, 0, report.migrate.output);
    t.match(report.migrate.output, /applied 007_changes_recorded_at, .*, 012_wal_history/);
    t.ok(report.writes.count > 0, `${report.writes.count} change log writes, none failed`);
    // Judged in `problems`, with the slack of PostgreSQL's timer.
    t.comment(
      `longest lock wait ${Math.round(report.longestLockWait.ms)} ms (${report.longestLockWait.what})`,
    );
    for (const { phase, requests } of report.phases) {
      t.ok(requests.length > 0, `${phase}: ${requests.length} requests`);
      t.same(
        requests.filter((r) => r.outcome === 'failed'),
        [],
        `${phase}: none failed`,
      );
    }
  },
);

/**
 * The compression job of `measurements` (sql/014, in place of TimescaleDB's policy) on native
 * TimescaleDB runs by itself: its schedule is brought forward, and TimescaleDB's own scheduler runs the
 * job, which compresses every chunk older than its 180 days and leaves the newer ones. On PostgreSQL
 * 15.20 every background job of TimescaleDB 2.28.3 is recorded as failed after its work has committed
 * (docs/decisions/0113-the-compression-policy-runs-itself.md): the test accepts that one error and no
 * other.
 */
import t from 'tap';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { freshDatabase, timescaleServerOrSkip } from '../helpers/database.js';
import { until } from '../helpers/until.js';

/** What PostgreSQL 15.20 answers TimescaleDB 2.28.3's job runner as it drops its portal. */
const PORTAL_ERROR = 'cannot drop portal "" while it is being set up';

const server = timescaleServerOrSkip(t);

if (server) {
  t.test('the scheduler runs the compression job, which compresses the old chunks alone', async (t) => {
    const { sql } = await freshDatabase(t, { server });
    t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
    const [tube] = await addWell(sql, 'Policy', [{ number: '1' }]);
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    await addRegularSeries(sql, tube!.id, daysAgo(400), daysAgo(300), '1 hour');
    await addRegularSeries(sql, tube!.id, daysAgo(20), daysAgo(1), '1 hour');
    const chunks = () =>
      sql<{ old: boolean; compressed: boolean }[]>`
        select range_end < now() - interval '180 days' as old, is_compressed as compressed
        from timescaledb_information.chunks where hypertable_name = 'measurements'`;
    const before = await chunks();
    t.ok(
      before.some((chunk) => chunk.old) && before.some((chunk) => !chunk.old),
      'chunks on both sides of 180 days',
    );
    t.notOk(
      before.some((chunk) => chunk.compressed),
      'nothing compressed before the job',
    );

    const [job] = await sql<{ id: number }[]>`
      select job_id as id from timescaledb_information.jobs
      where proc_name = 'compress_measurements'`;
    t.ok(job, 'the migrations scheduled the job');
    await sql`select alter_job(${job!.id}, next_start => now())`;
    const after = await until(
      'the scheduler has compressed every old chunk',
      chunks,
      (rows) => rows.every((chunk) => chunk.compressed === chunk.old),
      60_000,
    );
    t.ok(after.length === before.length, 'the same chunks');

    const [stats] = await sql<{ runs: number }[]>`
      select total_runs::int as runs from timescaledb_information.job_stats where job_id = ${job!.id}`;
    t.ok(stats!.runs >= 1, 'run by the scheduler, not by hand');
    const errors = await sql<{ message: string }[]>`
      select err_message as message from timescaledb_information.job_errors where job_id = ${job!.id}`;
    t.same(
      [...new Set(errors.map((error) => error.message))].filter((message) => message !== PORTAL_ERROR),
      [],
      'no error but the known one after the work',
    );
  });
}

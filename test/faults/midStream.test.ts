/**
 * PostgreSQL lost in the middle of a series: the response that was streaming is cut off (no closing
 * `]}`, no terminating chunk: the client can tell it is incomplete), the key's concurrency slots are
 * free again, the stream's pooled connection is given back, and later requests are served. Three ways
 * to lose it: the backend terminated (pg_terminate_backend: that session only), a backend killed
 * (SIGKILL: PostgreSQL then ends every session and reinitialises), the postmaster killed (the whole
 * server gone until it is started again).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { seriesPath } from '../../testkit/apiPaths.js';
import {
  describe,
  eventually,
  fetchOutcome,
  pausedStreams,
  RECOVERED_WITHIN_MS,
  SERIES_START,
  startFaultReplica,
  within,
} from '../../testkit/faults.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { startOwnPostgres } from '../../testkit/postgres.js';

t.test('PostgreSQL lost mid-stream', async (t) => {
  const pg = await startOwnPostgres(t);
  const [tube] = await addWell(pg.admin, 'Well', [{ number: '1' }]);
  // Half a year of 1-minute data, ~13 MB of JSON: far more than loopback's socket buffers (which grow
  // to several MB) and the stream's read-ahead hold, so a paused client keeps its response mid-stream
  // as long as the test likes.
  await addRegularSeries(pg.admin, tube!.id, '2024-01-01T00:00:00Z', '2024-07-01T00:00:00Z', '1 minute');
  const { key } = await addKey(pg.admin, { tubeIds: [tube!.id] });
  const replica = await startFaultReplica(t, pg.url);
  const long = seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-07-01T00:00:00Z');

  /** Two streams of the key at once (its CONCURRENCY_LIMIT), each begun and then paused. */
  const twoPausedStreams = () => pausedStreams(replica.base, long, key, 2);

  const servingBackends = () =>
    pg.query(
      (sql) => sql<{ pid: number }[]>`
        select pid from pg_stat_activity
        where application_name = 'gwapi serve' and state in ('idle in transaction', 'active')`,
    );

  const faults: [string, () => Promise<void>][] = [
    [
      'pg_terminate_backend of the serving backends',
      async () => {
        await pg.query(
          (sql) => sql`
          select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'gwapi serve' and state in ('idle in transaction', 'active')`,
        );
      },
    ],
    [
      'SIGKILL of a serving backend (PostgreSQL ends every session and reinitialises)',
      async () => {
        const [backend] = await servingBackends();
        process.kill(backend!.pid, 'SIGKILL');
      },
    ],
    [
      'SIGKILL of the postmaster, then a start',
      async () => {
        await pg.kill();
        await pg.start();
      },
    ],
  ];

  for (const [name, fault] of faults) {
    t.test(name, async (t: Test) => {
      const streams = await twoPausedStreams();
      t.ok(streams, 'two streams of the key began');
      t.equal((await servingBackends()).length, 2, 'each holds a backend in its transaction');
      await fault();
      const back = performance.now();

      for (const stream of streams!) {
        stream.resume();
        const { complete, body } = await within(stream.done, 15_000, {
          complete: true,
          body: 'no end of the response within 15 s',
          bytes: Buffer.alloc(0),
        });
        t.notOk(complete, 'the response was cut off (connection closed before the last chunk)');
        t.ok(body.startsWith(SERIES_START), 'it had begun as a series');
        t.notOk(
          body.endsWith(']}'),
          `its body is incomplete (${(body.length / 1e6).toFixed(1)} MB, no closing ]})`,
        );
      }

      // The key opens its two streams again, as soon as PostgreSQL lets it: no slot kept by the cut ones.
      let again = await twoPausedStreams();
      while (!again && performance.now() - back < RECOVERED_WITHIN_MS) {
        await sleep(100);
        again = await twoPausedStreams();
      }
      t.ok(again, `two streams again after ${Math.round(performance.now() - back)} ms`);
      for (const stream of again ?? []) stream.abort();

      const later = await fetchOutcome(replica.base, long, { 'x-api-key': key }, 30_000);
      t.ok(later.status === 200 && later.complete, `a later request is served: ${describe(later)}`);
      t.ok(later.body.endsWith(']}'));
      const held = () => replica.metric('gwapi_db_stream_connections{state="held"}');
      t.equal(await eventually(held, 0), 0, 'no connection held by a stream');
      t.equal(replica.child.exitCode, null, 'the replica still runs');
    });
  }
});

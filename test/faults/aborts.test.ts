/**
 * 1,000 series requests in a row whose clients leave before the end: at once, a moment later (the
 * server is between the key lookup and the first batch), after the response head, after the first
 * chunk of the body. Afterwards nothing is left behind: no backend in a transaction or beyond the pool,
 * no stream connection in the metrics, both concurrency slots of every key free, and the server's live
 * memory where it was after the warm-up. A control server that keeps every response fails that last
 * check.
 */
import t from 'tap';
import { seriesPath } from '../../testkit/apiPaths.js';
import {
  abortMany,
  countStatuses,
  describe,
  eventually,
  type FaultReplica,
  fetchOutcome,
  LIVE_MEMORY_GROWTH_BOUND_MB,
  pausedStreams,
  startFaultReplica,
  timedAborts,
} from '../../testkit/faults.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { freshDatabase } from '../helpers/database.js';

const ABORTS = Number(process.env.GWAPI_FAULT_ABORTS ?? 1000);
/** Aborts before the baseline: every code path compiled, every pool and cache grown to its size. */
const WARM_UP = 200;
/** Keys aborting side by side; one request of a key at a time, so its CONCURRENCY_LIMIT (2) is never met. */
const LANES = Number(process.env.GWAPI_FAULT_LANES ?? 8);
const POOL_MAX = 10;
/**
 * Preloaded into the control's server: keeps every request and response it ever had, as a leak would.
 * Without spaces, which would split NODE_OPTIONS.
 */
const KEEP_EVERY_RESPONSE =
  "--import=data:text/javascript,import{subscribe}from'node:diagnostics_channel';globalThis.kept=[];" +
  "subscribe('http.server.request.start',(message)=>globalThis.kept.push(message))";

t.test(`${ABORTS} client aborts in a row leak nothing`, async (t) => {
  const db = await freshDatabase(t);
  const [tube] = await addWell(db.sql, 'Well', [{ number: '1' }]);
  // Two months of 1-minute data: the first chunk is one batch (BATCH_SIZE rows), and ~5 MB follow it.
  await addRegularSeries(db.sql, tube!.id, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z', '1 minute');
  const keys = await Promise.all(
    Array.from({ length: LANES }, () => addKey(db.sql, { tubeIds: [tube!.id] })),
  );
  // A day for the clients that leave before the head, two months for those that leave during the body.
  const paths = {
    short: seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'),
    long: seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z'),
  };
  const path = paths.long;
  const keyTexts = keys.map(({ key }) => key);

  const backends = () =>
    db.sql<{ state: string; count: number }[]>`
      select coalesce(state, '') as state, count(*)::int as count from pg_stat_activity
      where datname = ${db.name} and application_name = 'gwapi serve' group by state`;
  const busyBackends = async () =>
    (await backends()).filter((row) => row.state !== 'idle').reduce((sum, row) => sum + row.count, 0);

  /** The warm-up and the aborts on `replica`: its live memory before and after them, and what the clients saw. */
  const abortRound = async (replica: FaultReplica) => {
    await abortMany(replica.base, paths, keyTexts, WARM_UP);
    await eventually(busyBackends, 0);
    const baselineMb = await replica.liveMemoryMb();
    const round = await timedAborts(replica, paths, keyTexts, ABORTS);
    await eventually(busyBackends, 0);
    const afterMb = await replica.liveMemoryMb();
    const memory =
      `live memory after ${WARM_UP} warm-up aborts ${baselineMb.toFixed(1)} MB, ` +
      `after ${ABORTS} more ${afterMb.toFixed(1)} MB (RSS ${replica.residentMb().toFixed(0)} MB)`;
    return { ...round, growthMb: afterMb - baselineMb, memory };
  };

  const replica = await startFaultReplica(t, db.url, { DATABASE_POOL_MAX: String(POOL_MAX) });
  const { statuses, seconds, serverCpu, growthMb, memory } = await abortRound(replica);
  t.comment(`the server used ${serverCpu.toFixed(1)} s of CPU for them`);
  t.comment(`statuses seen by the leaving clients, by where they left: ${JSON.stringify(statuses)}`);
  const count = (status?: number) => countStatuses(statuses, status);
  t.equal(count(), ABORTS, `${ABORTS} aborts in ${seconds.toFixed(1)} s`);
  // A 429 is no leak: a key's previous two clients may have left before the server noticed (it is
  // still looking up the key or opening their streams). But most requests must have got their series.
  t.equal(count() - count(200) - count(429) - count(0), 0, 'every client that saw a status saw 200 or 429');
  t.ok(count(200) >= ABORTS / 4, `${count(200)} of them had their series begun (200)`);

  t.equal(await eventually(busyBackends, 0), 0, 'no backend left in a transaction');
  const open = (await backends()).reduce((sum, row) => sum + row.count, 0);
  t.ok(open <= POOL_MAX, `${open} connections open, within the pool (${POOL_MAX})`);
  const gauge = (sample: string) => () => replica.metric(sample);
  t.equal(await eventually(gauge('gwapi_db_stream_connections{state="held"}'), 0), 0, 'metrics: none held');
  t.equal(
    await eventually(gauge('gwapi_db_stream_connections{state="waiting"}'), 0),
    0,
    'metrics: none waiting',
  );
  t.equal(await eventually(gauge('gwapi_active_streams'), 0), 0, 'metrics: no active stream');
  t.ok(
    growthMb < LIVE_MEMORY_GROWTH_BOUND_MB,
    `${memory}: grew by ${growthMb.toFixed(1)} MB (bound ${LIVE_MEMORY_GROWTH_BOUND_MB} MB)`,
  );

  // Every key opens its two streams at once: no slot was kept by a response whose client left.
  for (const key of keyTexts) {
    const streams = await pausedStreams(replica.base, path, key, 2);
    t.ok(streams, 'two streams of one key at once');
    for (const stream of streams ?? []) stream.abort();
  }
  const whole = await fetchOutcome(replica.base, path, { 'x-api-key': keys[0]!.key }, 30_000);
  t.ok(
    whole.status === 200 && whole.complete && whole.body.endsWith(']}'),
    `a whole series: ${describe(whole)}`,
  );
  await replica.stop();

  // Control: the same round on a server that keeps every response grows past the bound.
  const leaking = await startFaultReplica(t, db.url, {
    DATABASE_POOL_MAX: String(POOL_MAX),
    NODE_OPTIONS: KEEP_EVERY_RESPONSE,
  });
  const control = await abortRound(leaking);
  t.ok(
    control.growthMb >= LIVE_MEMORY_GROWTH_BOUND_MB,
    `control, a server that keeps every response: ${control.memory}: grew by ${control.growthMb.toFixed(1)} MB`,
  );
});

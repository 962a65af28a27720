/**
 * Slow clients that hold every database connection do not make other requests hang: over real HTTP,
 * with DATABASE_POOL_MAX=2 and a 1 s DATABASE_WAIT_SECONDS, two keys hold both connections with series
 * they do not read; every other request (series, HEAD, discovery, a key not yet cached) waits its second
 * and gets a 503 problem with Retry-After, and all is well again once the slow clients are gone. Also: a
 * series stream gives its connection's permit back on every way out.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { loadSettings } from '../../src/config.js';
import type { GateCounts } from '../../src/db/connectionGate.js';
import { createMetrics, type ServiceMetrics } from '../../src/http/observability/metrics.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { VERSION_FRESH_MS } from '../../src/v1/wells/discoveryCache.js';
import { addKey, addRegularSeries, addWell, type KeyFixture } from '../../testkit/fixtures.js';
import { openStream } from '../../testkit/openStream.js';
import { startApi, type TestApi } from '../helpers/api.js';
import { type HttpResponse, send } from '../helpers/http.js';
import { recordingLogger } from '../helpers/limits.js';

const WAIT_SECONDS = 1;
const ENV = {
  DATABASE_POOL_MAX: '2',
  DATABASE_WAIT_SECONDS: String(WAIT_SECONDS),
  // Keys looked up before the pool fills stay cached for the whole test.
  KEY_CACHE_SECONDS: '10',
};
/** Six months of 1-minute data: about 15 MB of JSON, far more than socket buffers absorb (~4 MB). */
const LONG = '?from=2024-01-01T00:00:00Z&to=2024-07-01T00:00:00Z';
const DAY = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';
const WELLS = '/v1/groundwater-monitoring-wells';
const BUSY_LOG = 'no database connection came free in time: answered 503';

/** The gauge of the connection gate as a scrape would show it. */
async function gateCounts(metrics: ServiceMetrics): Promise<GateCounts> {
  const { values } = await metrics.registry.getSingleMetric('gwapi_db_connections')!.get();
  const count = (state: string) => values.find((v) => v.labels.state === state)?.value ?? Number.NaN;
  return { held: count('held'), waiting: count('waiting') };
}

/** Polls the gauge until it shows `expected` or 5 s are over; what it showed last. */
async function gateSettles(metrics: ServiceMetrics, expected: GateCounts): Promise<GateCounts> {
  const deadline = performance.now() + 5000;
  let counts = await gateCounts(metrics);
  while (
    (counts.held !== expected.held || counts.waiting !== expected.waiting) &&
    performance.now() < deadline
  ) {
    await sleep(20);
    counts = await gateCounts(metrics);
  }
  return counts;
}

async function counterValue(metrics: ServiceMetrics, name: string): Promise<number> {
  const { values } = await metrics.registry.getSingleMetric(name)!.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

/** The app's database connections inside a transaction (a stream's snapshot). */
async function backendsInTransaction(api: TestApi): Promise<{ pid: number }[]> {
  return api.db.sql<{ pid: number }[]>`
    select pid from pg_stat_activity
    where application_name = ${api.applicationName} and state in ('active', 'idle in transaction')`;
}

async function timed(request: Promise<HttpResponse>): Promise<{ response: HttpResponse; ms: number }> {
  const started = performance.now();
  const response = await request;
  return { response, ms: performance.now() - started };
}

t.test('slow clients holding every connection', async (t) => {
  const settings = loadSettings(ENV);
  // Real limits (in process), so the concurrency slots of refused requests are seen to come back.
  const limits = await createClientLimits(settings, { logger: recordingLogger() });
  t.teardown(() => limits.close());
  const metrics = createMetrics({ limits, poolMax: settings.DATABASE_POOL_MAX });
  const api = await startApi(t, { env: ENV, poolMax: settings.DATABASE_POOL_MAX, limits, metrics });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Well', [{ number: '1' }]);
  await addRegularSeries(sql, tube!.id, '2024-01-01T00:00:00Z', '2024-07-01T00:00:00Z', '1 minute');
  await sql`vacuum analyze measurements`;
  const grant = { tubeIds: [tube!.id] };
  // Two slow clients, one that waits, and one whose key is not cached when the pool is full.
  const slowA = await addKey(sql, grant);
  const slowB = await addKey(sql, grant);
  const waiting = await addKey(sql, grant);
  const cold = await addKey(sql, grant);
  const seriesPath = (query: string) =>
    `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements${query}`;
  const as = (key: KeyFixture, method: string, path: string) =>
    send(api.base, method, path, { 'x-api-key': key.key });

  const busy = (t: Test, name: string, { response, ms }: { response: HttpResponse; ms: number }) => {
    t.equal(response.status, 503, `${name}: 503`);
    t.equal(response.headers['retry-after'], String(WAIT_SECONDS), `${name}: Retry-After`);
    t.equal(response.headers['api-version'], '1.4.0', `${name}: API-Version`);
    t.ok(ms >= WAIT_SECONDS * 1000, `${name}: answered after the wait (${Math.round(ms)} ms)`);
    t.ok(ms < 3 * WAIT_SECONDS * 1000, `${name}: and well before three times it`);
    if (response.body === '') return; // HEAD
    t.equal(response.headers['content-type'], 'application/problem+json', `${name}: a problem`);
    const problem = JSON.parse(response.body);
    t.match(problem, { type: 'about:blank', title: 'Service Unavailable', status: 503 });
    t.match(problem.detail, /busy/);
  };

  // The waiting key is looked up (and discovery cached) while connections are free: its requests
  // below wait at the series and discovery gates, not at the key lookup.
  t.equal((await as(waiting, 'GET', WELLS)).status, 200);
  const cachedAt = performance.now();
  const timeoutsBefore = await counterValue(metrics, 'gwapi_db_wait_timeouts_total');

  const slow = [slowA, slowB].map((key) => openStream(api.base, seriesPath(LONG), key.key));
  let slowFinished = false;
  for (const stream of slow) {
    void stream.done.then(() => (slowFinished = true));
    await stream.firstChunk;
    stream.pause();
  }

  t.test('the slow clients hold both connections', async (t) => {
    t.same(await gateSettles(metrics, { held: 2, waiting: 0 }), { held: 2, waiting: 0 });
    await sleep(500);
    t.same(await gateCounts(metrics), { held: 2, waiting: 0 }, 'and keep holding them');
    t.equal((await backendsInTransaction(api)).length, 2, 'both in an open transaction');
    t.notOk(slowFinished, 'neither stream could finish into socket buffers');
  });

  t.test('a series and discovery at once: each 503 after the wait, never a hang', async (t) => {
    // A cached discovery body needs the database only to read the registry version, at most once per
    // VERSION_FRESH_MS: past that, this request must wait for a connection too.
    await sleep(Math.max(0, VERSION_FRESH_MS - (performance.now() - cachedAt)));
    const [series, discovery] = await Promise.all([
      timed(as(waiting, 'GET', seriesPath(DAY))),
      timed(as(waiting, 'GET', WELLS)),
    ]);
    busy(t, 'series', series);
    t.equal(JSON.parse(series.response.body).instance, seriesPath(''));
    busy(t, 'discovery', discovery);
    t.equal(JSON.parse(discovery.response.body).instance, WELLS);
  });

  t.test('HEAD waits at the tube lookup and gets 503 too', async (t) => {
    // Also shows the two 503s above gave back their concurrency slots: a third would be 429.
    busy(t, 'HEAD', await timed(as(waiting, 'HEAD', seriesPath(DAY))));
  });

  t.test('a key not yet cached waits at its lookup and gets 503, not 401', async (t) => {
    busy(t, 'cold key', await timed(as(cold, 'GET', seriesPath(DAY))));
  });

  t.test('a client that leaves while it waits leaves the queue at once', async (t) => {
    const leaving = openStream(api.base, seriesPath(DAY), waiting.key);
    t.same(await gateSettles(metrics, { held: 2, waiting: 1 }), { held: 2, waiting: 1 }, 'it waits');
    const left = performance.now();
    leaving.abort();
    t.same(await gateSettles(metrics, { held: 2, waiting: 0 }), { held: 2, waiting: 0 }, 'it left');
    t.ok(performance.now() - left < 500, 'well before its wait would have run out');
    await sleep(100);
    const errors = api.logLines.filter((line) => JSON.parse(line).level >= 50);
    t.same(errors, [], 'neither a client that left nor a 503 is logged as an error');
    t.equal(
      await counterValue(metrics, 'gwapi_db_wait_timeouts_total'),
      timeoutsBefore + 4,
      'a client that left is not counted as a timeout',
    );
  });

  t.test('each 503 is counted and logged once at warn, without any key', async (t) => {
    t.equal(await counterValue(metrics, 'gwapi_db_wait_timeouts_total'), timeoutsBefore + 4);
    const warnings = api.logLines.filter((line) => line.includes(BUSY_LOG));
    t.equal(warnings.length, 4, 'one warning per 503');
    for (const line of warnings) {
      const entry = JSON.parse(line);
      t.equal(entry.level, 40, 'at warn');
      t.equal(entry.waitedMs, WAIT_SECONDS * 1000);
      t.same(entry.connections, { held: 2, waiting: entry.connections.waiting });
      for (const key of [slowA, slowB, waiting, cold]) t.notOk(line.includes(key.key), 'no key');
    }
  });

  t.test('once the slow clients are gone, every request succeeds again', async (t) => {
    for (const stream of slow) stream.abort();
    t.same(await gateSettles(metrics, { held: 0, waiting: 0 }), { held: 0, waiting: 0 }, 'permits back');
    t.equal((await backendsInTransaction(api)).length, 0, 'no transaction left open');
    const series = await as(waiting, 'GET', seriesPath(DAY));
    t.equal(series.status, 200);
    t.equal(JSON.parse(series.body).measurements.length, 24 * 60);
    t.equal((await as(waiting, 'GET', WELLS)).status, 200);
    t.equal((await as(cold, 'GET', WELLS)).status, 200, 'the key that could not be looked up now works');
    t.same(await gateSettles(metrics, { held: 0, waiting: 0 }), { held: 0, waiting: 0 });
  });

  t.test('a series stream gives its permit back on every way out', async (t) => {
    const { key } = slowA;
    const streamGauge = async () => {
      const { values } = await metrics.registry.getSingleMetric('gwapi_db_stream_connections')!.get();
      return values.map((v) => v.value);
    };
    const allBack = async (t: Test, way: string) => {
      t.same(await gateSettles(metrics, { held: 0, waiting: 0 }), { held: 0, waiting: 0 }, `${way}: gate`);
      t.same(await streamGauge(), [0, 0], `${way}: stream connections`);
    };

    const whole = openStream(api.base, seriesPath(DAY), key);
    t.ok((await whole.done).complete);
    await allBack(t, 'the end');

    const abandoned = openStream(api.base, seriesPath(LONG), key);
    await abandoned.firstChunk;
    t.equal((await gateCounts(metrics)).held, 1, 'held while streaming');
    abandoned.abort();
    await allBack(t, 'the client left');

    const failing = openStream(api.base, seriesPath(LONG), key);
    await failing.firstChunk;
    failing.pause();
    const [backend] = await backendsInTransaction(api);
    await sql`select pg_terminate_backend(${backend!.pid})`;
    failing.resume();
    t.notOk((await failing.done).complete, 'a database error mid-stream cuts the response');
    await allBack(t, 'a database error mid-stream');

    t.equal((await as(slowA, 'GET', seriesPath(DAY).replace(tube!.identifier, randomUUID()))).status, 404);
    await allBack(t, 'no such tube');

    await sql`alter table measurements rename to measurements_elsewhere`;
    const failed = await as(slowA, 'GET', seriesPath(DAY));
    await sql`alter table measurements_elsewhere rename to measurements`;
    t.equal(failed.status, 500);
    await allBack(t, 'a database error before the first byte');

    const again = await as(slowA, 'GET', seriesPath(DAY));
    t.equal(again.status, 200, 'and the pool still serves');
  });
});

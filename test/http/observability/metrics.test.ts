/**
 * Prometheus metrics over real HTTP: what the API counts, read back from the metrics listener, and
 * that /metrics is served only there (METRICS_PORT), never on the API's port.
 */
import type { FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import { createMetrics } from '../../../src/http/observability/metrics.js';
import { listenForMetrics } from '../../../src/http/observability/metricsServer.js';
import { generateApiKey } from '../../../src/keys/format.js';
import { createClientLimits } from '../../../src/limits/createClientLimits.js';
import { addKey, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import type { Replica } from '../../../testkit/gwapi.js';
import { openStream } from '../../../testkit/openStream.js';
import { startApi } from '../../helpers/api.js';
import { get, send } from '../../helpers/http.js';
import { limitsOnOwnRedis, recordingLogger, settingsWith, sleep } from '../../helpers/limits.js';
import { scriptedLimits } from '../../helpers/scriptedLimits.js';
import { startReplica } from '../../helpers/serve.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const SERIES_ROUTE = '/v1/groundwater-monitoring-tubes/:tubeIdentifier/measurements';
const DAY = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';
const YEAR = '?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';

/** Samples of an exposition: `name{labels}` → value. */
type Samples = Map<string, number>;

function parseExposition(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** The sample's name as the exposition writes it: labels in the order given. */
const sample = (name: string, labels: Record<string, string> = {}) => {
  const pairs = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  return pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`;
};

async function listen(t: Test, metrics: ReturnType<typeof createMetrics>, app: FastifyInstance) {
  const listener = await listenForMetrics(metrics, { HOST: '127.0.0.1', METRICS_PORT: 0 }, app.log);
  t.teardown(() => listener?.close());
  const address = listener?.server.address();
  if (!address || typeof address === 'string') throw new Error('the metrics listener does not listen');
  const base = `http://127.0.0.1:${address.port}`;
  const scrape = async (): Promise<{ text: string; samples: Samples }> => {
    const response = await get(base, '/metrics');
    if (response.status !== 200) throw new Error(`scrape answered ${response.status}`);
    return { text: response.body, samples: parseExposition(response.body) };
  };
  return { base, scrape };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 10_000) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

t.test('what the API counts, scraped from the metrics listener', async (t) => {
  const limits = scriptedLimits();
  const metrics = createMetrics({ limits, poolMax: 1 });
  // One pooled connection: a second stream waits for the first one's.
  const api = await startApi(t, { limits, metrics, poolMax: 1 });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Logger', [{ number: '1' }]);
  await addRegularSeries(sql, tube!.id, '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '1 minute');
  await sql`vacuum analyze measurements`;
  const { key, keyId } = await addKey(sql, { tubeIds: [tube!.id] });
  const series = `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements`;
  const { base, scrape } = await listen(t, metrics, api.app);
  const headers = { 'x-api-key': key };

  /** How much each sample grew while `action` ran. */
  async function growth(action: () => Promise<void>) {
    const before = (await scrape()).samples;
    await action();
    const after = (await scrape()).samples;
    return (name: string, labels: Record<string, string> = {}) => {
      const key = sample(name, labels);
      return (after.get(key) ?? 0) - (before.get(key) ?? 0);
    };
  }

  t.test('responses by route pattern and status, their duration, bytes and rows', async (t) => {
    let seriesBytes = 0;
    const grew = await growth(async () => {
      t.equal((await get(api.base, WELLS, headers)).status, 200);
      const day = await get(api.base, `${series}${DAY}`, headers);
      t.equal(day.status, 200);
      seriesBytes = Buffer.byteLength(day.body);
      t.equal((await get(api.base, '/v1/no-such-thing')).status, 404);
      t.equal((await send(api.base, 'DELETE', WELLS)).status, 405);
    });
    const requests = 'gwapi_http_requests_total';
    t.equal(grew(requests, { method: 'GET', route: WELLS, status: '200' }), 1);
    t.equal(grew(requests, { method: 'GET', route: SERIES_ROUTE, status: '200' }), 1);
    t.equal(grew(requests, { method: 'GET', route: 'unmatched', status: '404' }), 1);
    t.equal(grew(requests, { method: 'DELETE', route: WELLS, status: '405' }), 1);
    const durations = 'gwapi_http_request_duration_seconds_count';
    t.equal(grew(durations, { method: 'GET', route: SERIES_ROUTE, status: '200' }), 1);
    t.equal(grew('gwapi_measurements_streamed_total'), 1440, 'one day of 1-minute data');
    const bytes = grew('gwapi_http_response_bytes_total', { route: SERIES_ROUTE });
    t.ok(
      bytes > seriesBytes && bytes < seriesBytes + 2000,
      `${bytes} bytes written for a ${seriesBytes}-byte body and its head`,
    );
  });

  t.test('429s by reason', async (t) => {
    const grew = await growth(async () => {
      limits.refuseNext('rate', 3);
      t.equal((await get(api.base, WELLS, headers)).status, 429);
      limits.refuseNext('concurrency', 1);
      t.equal((await get(api.base, WELLS, headers)).status, 429);
      limits.refuseFailedAuth(5);
      t.equal((await get(api.base, WELLS, { 'x-api-key': generateApiKey() })).status, 429);
      limits.refuseFailedAuth(null);
    });
    for (const reason of ['rate', 'concurrency', 'failed-auth']) {
      t.equal(grew('gwapi_rate_limited_total', { reason }), 1, reason);
    }
    t.equal(grew('gwapi_http_requests_total', { method: 'GET', route: WELLS, status: '429' }), 3);
  });

  t.test('key cache hits and misses', async (t) => {
    const other = await addKey(sql, { allTubes: true });
    const grew = await growth(async () => {
      for (let i = 0; i < 3; i++) await get(api.base, WELLS, { 'x-api-key': other.key });
    });
    t.equal(grew('gwapi_key_cache_lookups_total', { result: 'miss' }), 1);
    t.equal(grew('gwapi_key_cache_lookups_total', { result: 'hit' }), 2);
  });

  t.test('kept latest documents: hits, and a miss after any committed write', async (t) => {
    const latest = '/v1/groundwater-monitoring-measurements/latest';
    const bodies: string[] = [];
    const grew = await growth(async () => {
      for (let i = 0; i < 3; i++) bodies.push((await get(api.base, latest, headers)).body);
      // By hand, past every writer: the document follows the snapshot, not what writers announce.
      await sql`
        insert into latest_measurements (tube_id, status, observed_at, value)
        values (${tube!.id}, 0, '2024-12-31T23:59:00Z', 1.5)
        on conflict (tube_id, status) do update set value = latest_measurements.value + 1`;
      bodies.push((await get(api.base, latest, headers)).body);
    });
    t.equal(
      grew('gwapi_kept_documents_total', { result: 'miss' }),
      2,
      'the first, and the first after the write',
    );
    t.equal(grew('gwapi_kept_documents_total', { result: 'hit' }), 2);
    t.equal(bodies[1], bodies[0], 'a kept document: the same bytes');
    t.equal(bodies[2], bodies[0]);
    t.not(bodies[3], bodies[0], 'the write shows at once');
  });

  t.test('streams in flight and the connections they hold or wait for', async (t) => {
    const gauges = async () => {
      const { samples } = await scrape();
      return {
        streams: samples.get('gwapi_active_streams'),
        held: samples.get(sample('gwapi_db_stream_connections', { state: 'held' })),
        waiting: samples.get(sample('gwapi_db_stream_connections', { state: 'waiting' })),
      };
    };
    t.same(await gauges(), { streams: 0, held: 0, waiting: 0 });
    t.equal((await scrape()).samples.get('gwapi_db_pool_max'), 1);

    const first = openStream(api.base, `${series}${YEAR}`, key);
    await first.firstChunk;
    first.pause();
    t.same(await gauges(), { streams: 1, held: 1, waiting: 0 }, 'a paused stream holds the connection');

    const second = openStream(api.base, `${series}${DAY}`, key);
    await until('the second stream waits', async () => (await gauges()).waiting === 1);
    t.same(await gauges(), { streams: 1, held: 1, waiting: 1 }, 'the next one waits for it');

    first.abort();
    const { complete } = await second.done;
    t.ok(complete, 'the second stream got the connection once the first gave it back');
    await until('everything is given back', async () => {
      const now = await gauges();
      return now.streams === 0 && now.held === 0 && now.waiting === 0;
    });
    t.pass('no stream and no connection left over');
  });

  t.test('no key, key id, tube identifier or client path in any sample', async (t) => {
    const { text } = await scrape();
    for (const secret of [key, keyId, tube!.identifier, '/v1/no-such-thing', 'gw_']) {
      t.notOk(text.includes(secret), `no "${secret.slice(0, 12)}…"`);
    }
  });

  t.test('the metrics listener: GET and HEAD, 405 and 404 like the API, process metrics', async (t) => {
    const scraped = await get(base, '/metrics');
    t.equal(scraped.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    t.equal(scraped.headers['api-version'], '1.4.0');
    t.equal(scraped.headers['cache-control'], 'no-store');
    t.match(scraped.body, /^process_cpu_user_seconds_total \d/m, 'the process metrics too');
    t.match(scraped.body, /^# TYPE gwapi_http_request_duration_seconds histogram$/m);
    const head = await send(base, 'HEAD', '/metrics');
    t.equal(head.status, 200);
    t.equal(head.body, '');
    const post = await send(base, 'POST', '/metrics');
    t.equal(post.status, 405);
    t.equal(post.headers.allow, 'GET, HEAD');
    const other = await get(base, WELLS);
    t.equal(other.status, 404, 'the API is not served on the metrics port');
    t.equal(other.headers['content-type'], 'application/problem+json');
  });

  t.test('the API port does not serve /metrics', async (t) => {
    const response = await get(api.base, '/metrics');
    t.equal(response.status, 404);
    t.equal(response.headers['content-type'], 'application/problem+json');
  });
});

t.test('the limits state: in process, shared through Redis, falling back while Redis is down', async (t) => {
  const state = async (metrics: ReturnType<typeof createMetrics>) => {
    const samples = parseExposition(await metrics.registry.metrics());
    return ['in-process', 'shared', 'fallback'].filter(
      (name) => samples.get(sample('gwapi_limits_state', { state: name })) === 1,
    );
  };
  const local = await createClientLimits(settingsWith(), { logger: recordingLogger() });
  t.same(await state(createMetrics({ limits: local, poolMax: 1 })), ['in-process']);
  t.same(await state(createMetrics({ limits: scriptedLimits(), poolMax: 1 })), [], 'limits lifted: none');

  const { redis, limits: shared } = await limitsOnOwnRedis(t, 'metrics:');
  const metrics = createMetrics({ limits: shared, poolMax: 1 });
  t.same(await state(metrics), ['shared']);
  await redis.stop();
  await until('Redis is seen gone', async () => (await state(metrics))[0] === 'fallback');
  t.same(await state(metrics), ['fallback']);
});

t.test('gwapi serve: metrics on METRICS_PORT only, and none without it', async (t) => {
  const { freshDatabase } = await import('../../helpers/database.js');
  const db = await freshDatabase(t);
  const metricsUrl = (replica: Replica) =>
    (replica.logs.find((line) => line.msg === 'metrics listening') as { metrics?: string } | undefined)
      ?.metrics;

  const withMetrics = await startReplica(t, { DATABASE_URL: db.url, METRICS_PORT: '0' });
  await until('the metrics listener is up', async () => metricsUrl(withMetrics) !== undefined);
  const url = new URL(metricsUrl(withMetrics)!);
  t.not(url.port, new URL(withMetrics.base).port, 'a port of its own');
  const scraped = await get(url.origin, url.pathname);
  t.equal(scraped.status, 200);
  t.match(scraped.body, /^gwapi_db_pool_max 10$/m);
  t.match(scraped.body, /^gwapi_limits_state\{state="in-process"\} 1$/m);
  t.equal((await get(withMetrics.base, '/metrics')).status, 404, 'not on the API port');

  const without = await startReplica(t, { DATABASE_URL: db.url });
  t.equal((await get(without.base, '/health/ready')).status, 200);
  t.equal((await get(without.base, '/metrics')).status, 404, 'not on the API port');
  t.equal(metricsUrl(without), undefined, 'and no metrics listener at all');
});

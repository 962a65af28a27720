/**
 * Fairness drill: small requests beside heavy keys. One `gwapi serve` with its default limits (kept in
 * Redis) and pool, a network of WELLS × 4 tubes with a year of 15-minute data. Sixteen keys ask for a
 * 1-day series of a random tube, each a request every PERIOD_MS (within its token bucket's refill):
 * first alone for SECONDS, then as long again beside four heavy keys, each pulling the network's year
 * as JSON in as many loops as its concurrency limit lets it. The pool's waiters are sampled from the
 * metrics listener every second. PASS when no small request fails and their p99 beside the heavy keys is
 * at most twice their p99 alone. Exit code 0 on PASS, 1 on FAIL, 2 when something it needs is missing.
 *
 *   npm run fairness [-- SECONDS [WELLS]]   (defaults 60 and 50)
 *   (DATABASE_URL, or an embedded PostgreSQL; REDIS_URL, or a throwaway redis-server)
 */
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { seriesPath } from '../testkit/apiPaths.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { countedGet } from '../testkit/drills/countedGet.js';
import { addKey } from '../testkit/fixtures.js';
import { spawnReplica } from '../testkit/gwapi.js';
import { requirePrerequisites, throwawayPostgres, throwawayRedis } from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { count, loadLine, machineLine, ms, printTable, ratio } from '../testkit/report.js';
import { addNetworkFixture, SERIES_START } from '../testkit/seriesFixture.js';

requirePrerequisites([throwawayPostgres, throwawayRedis]);

const [seconds, wells] = [process.argv[2] ?? '60', process.argv[3] ?? '50'].map(Number);
if (!(seconds! > 0 && Number.isInteger(wells) && wells! >= 50)) {
  console.error('usage: fairness.ts [SECONDS [WELLS]], a positive number and at least 50 wells (200 tubes)');
  process.exit(2);
}
const SMALL_KEYS = 16;
const HEAVY_KEYS = 4;
/** The default CONCURRENCY_LIMIT: what a heavy key may have in flight. */
const HEAVY_LOOPS_PER_KEY = 2;
/** Within the default refill of 0.5 requests a second. */
const PERIOD_MS = 2500;
const YEAR = { from: SERIES_START, to: '2025-01-01T00:00:00Z' };
const METRICS_PORT = 20_000 + Math.floor(Math.random() * 20_000);

interface Timed {
  startedAt: number;
  ms: number;
  status: number | 'error';
}

/** The p-th percentile (0–100) of `values`, nearest rank. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function timedGet(agent: Agent, url: string, key: string): Promise<Timed> {
  const startedAt = performance.now();
  try {
    const response = await countedGet(agent, url, { 'x-api-key': key }, { stallMs: 120_000 });
    const whole = response.complete && response.tail.endsWith('}');
    return { startedAt, ms: performance.now() - startedAt, status: whole ? response.status : 'error' };
  } catch {
    return { startedAt, ms: performance.now() - startedAt, status: 'error' };
  }
}

/** Loops of `request` until stopped; each loop waits `periodMs` (±20 %) from one start to the next. */
function loops(count: number, periodMs: number, request: (loop: number) => Promise<Timed>) {
  const done: Timed[] = [];
  let running = true;
  const all = Array.from({ length: count }, async (_, loop) => {
    await sleep(Math.random() * periodMs);
    while (running) {
      const timed = await request(loop);
      done.push(timed);
      const wait = timed.startedAt + periodMs * (0.8 + Math.random() * 0.4) - performance.now();
      if (wait > 0 && running) await sleep(wait);
    }
  });
  return {
    done,
    async stop() {
      running = false;
      await Promise.all(all);
    },
  };
}

/**
 * The largest number of requests waiting for a pooled connection, sampled every second; "not sampled"
 * when the metrics listener never answered.
 */
function sampleWaiters(metricsBase: string) {
  let most: number | undefined;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const text = await fetch(`${metricsBase}/metrics`)
        .then((response) => response.text())
        .catch(() => '');
      const waiting = /^gwapi_db_connections\{state="waiting"\} (\d+)/m.exec(text);
      if (waiting) most = Math.max(most ?? 0, Number(waiting[1]));
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      running = false;
      await sampling;
      return most === undefined ? 'not sampled' : String(most);
    },
  };
}

console.log(`Fairness drill — ${await machineLine()}`);
const pg = await startDatabaseServer();
const redis = await redisOrThrowaway(process.env.REDIS_URL);
let verdict = false;
try {
  const { url, sql } = await pg.database('drill_fairness');
  const started = performance.now();
  const network = await addNetworkFixture(sql, { wells: wells!, tubesPerWell: 4, stepMinutes: 15 });
  const ids = network.tubes.map((tube) => tube.id);
  const keysOf = async (n: number) =>
    Promise.all(Array.from({ length: n }, async () => (await addKey(sql, { tubeIds: ids })).key));
  const [smallKeys, heavyKeys] = [await keysOf(SMALL_KEYS), await keysOf(HEAVY_KEYS)];
  console.log(
    `${pg.description}; Redis at ${redis.url}; a network of ${count(ids.length)} tubes, ` +
      `${count(network.rows)} rows (written in ${((performance.now() - started) / 1000).toFixed(0)} s); ` +
      `default limits and pool; ${seconds} s alone, then ${seconds} s beside the heavy keys\n`,
  );
  const server = await spawnReplica(
    { DATABASE_URL: url, REDIS_URL: redis.url, METRICS_PORT: String(METRICS_PORT) },
    { keepLogs: false },
  );
  try {
    const day = (instant: number) => new Date(Date.parse(SERIES_START) + instant * 86_400_000).toISOString();
    const smallAgents = smallKeys.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
    const small = loops(SMALL_KEYS, PERIOD_MS, (loop) => {
      const tube = network.tubes[Math.floor(Math.random() * network.tubes.length)]!;
      const first = Math.floor(Math.random() * 365);
      const path = seriesPath(tube.identifier, day(first), day(first + 1));
      return timedGet(smallAgents[loop]!, `${server.base}${path}`, smallKeys[loop]!);
    });
    const waiters = sampleWaiters(`http://127.0.0.1:${METRICS_PORT}`);
    await sleep(seconds! * 1000);
    const heavyFrom = performance.now();
    const waitersAlone = await waiters.stop();
    const heavyWaiters = sampleWaiters(`http://127.0.0.1:${METRICS_PORT}`);
    const heavyAgent = new Agent({ keepAlive: true });
    const pullPath = `/v1/groundwater-monitoring-measurements?from=${YEAR.from}&to=${YEAR.to}`;
    const heavy = loops(HEAVY_KEYS * HEAVY_LOOPS_PER_KEY, PERIOD_MS, (loop) =>
      timedGet(heavyAgent, `${server.base}${pullPath}`, heavyKeys[loop % HEAVY_KEYS]!),
    );
    await sleep(seconds! * 1000);
    const heavyTo = performance.now();
    const waitersBeside = await heavyWaiters.stop();
    await Promise.all([small.stop(), heavy.stop()]);
    const load = await loadLine();

    const alone = small.done.filter((r) => r.startedAt < heavyFrom);
    const beside = small.done.filter((r) => r.startedAt >= heavyFrom && r.startedAt < heavyTo);
    const failed = (requests: Timed[]) => requests.filter((r) => r.status !== 200).length;
    const p = (requests: Timed[], q: number) =>
      percentile(
        requests.map((r) => r.ms),
        q,
      );
    const phaseRow = (name: string, requests: Timed[], waiting: string) => [
      name,
      count(requests.length),
      count(failed(requests)),
      ...[50, 99, 100].map((q) => ms(p(requests, q))),
      waiting,
    ];
    printTable(
      [
        'small requests (1-day series)',
        'requests',
        'not 200',
        'p50',
        'p99',
        'max',
        'most waiting for a connection',
      ],
      [phaseRow('alone', alone, waitersAlone), phaseRow('beside the heavy keys', beside, waitersBeside)],
    );
    const pulls = heavy.done.filter((r) => r.status === 200);
    console.log(
      `\nheavy keys: ${pulls.length} whole network years (${heavy.done.length - pulls.length} not), ` +
        `median ${ms(p(pulls, 50))}; ${load}`,
    );
    const slowdown = p(beside, 99) / p(alone, 99);
    verdict = failed(alone) + failed(beside) === 0 && slowdown <= 2;
    console.log(`p99 beside / alone: ${ratio(slowdown)} (bound ≤ 2×)\n${verdict ? 'PASS' : 'FAIL'}`);
    for (const agent of [...smallAgents, heavyAgent]) agent.destroy();
  } finally {
    await server.stop();
  }
} finally {
  await redis.stop();
  await pg.stop();
}
process.exit(verdict ? 0 : 1);

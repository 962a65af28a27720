/**
 * The fairness drill's machinery: small requests beside heavy keys, against one `gwapi serve`. Sixteen
 * keys ask for a 1-day series of a random tube, each a request every PERIOD_MS (within its token
 * bucket's refill): first alone for a phase, then as long again beside four heavy keys, each pulling the
 * network's year as JSON in as many loops as its concurrency limit lets it. The metrics listener is
 * read every second: the requests waiting for a pooled connection, the event loop's delay, and at each
 * phase's ends the waits for a connection by kind of request. It passes when no small request fails and
 * their p99 beside the heavy keys is at most twice their p99 alone. `npm run fairness` is the long run,
 * test/drills/fairness.test.ts a short one.
 */
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { Sql } from '../../src/db/connect.js';
import { seriesPath } from '../apiPaths.js';
import { addKey } from '../fixtures.js';
import { count, ms, printTable, ratio } from '../report.js';
import { addNetworkFixture, SERIES_START } from '../seriesFixture.js';
import type { HeavyPullsData } from './heavyPulls.js';
import { loops, type Timed, timedGet } from './timedLoops.js';

export type { Timed } from './timedLoops.js';

export const SMALL_KEYS = 16;
export const HEAVY_KEYS = 4;
/** The default CONCURRENCY_LIMIT: what a heavy key may have in flight. */
export const HEAVY_LOOPS_PER_KEY = 2;
/** Within the default refill of 0.5 requests a second. */
const PERIOD_MS = 2500;
/** How much slower the small requests' p99 may be beside the heavy keys. */
export const P99_BOUND = 2;
const YEAR = { from: SERIES_START, to: '2025-01-01T00:00:00Z' };
const PULL_PATH = `/v1/groundwater-monitoring-measurements?from=${YEAR.from}&to=${YEAR.to}`;

export interface FairnessFixture {
  tubes: { id: number; identifier: string }[];
  rows: number;
  smallKeys: string[];
  heavyKeys: string[];
}

/** A network of `wells` × 4 tubes with a year of data every `stepMinutes`, and the drill's keys. */
export async function addFairnessFixture(
  sql: Sql,
  options: { wells: number; stepMinutes: number },
): Promise<FairnessFixture> {
  const network = await addNetworkFixture(sql, { ...options, tubesPerWell: 4 });
  const ids = network.tubes.map((tube) => tube.id);
  const keysOf = async (n: number) =>
    Promise.all(Array.from({ length: n }, async () => (await addKey(sql, { tubeIds: ids })).key));
  return {
    tubes: network.tubes,
    rows: network.rows,
    smallKeys: await keysOf(SMALL_KEYS),
    heavyKeys: await keysOf(HEAVY_KEYS),
  };
}

/** Waits for a database connection of one kind of request within a phase, from the server's metrics. */
export interface KindWaits {
  kind: string;
  waits: number;
  meanMs: number;
  /** Waits longer than 100 ms. */
  over100ms: number;
}

/** What the metrics listener showed during a phase; undefined where it never answered. */
export interface PhaseMetrics {
  mostWaiting: number | undefined;
  /** The largest of the event loop's per-second p99 delays. */
  eventLoopP99Ms: number | undefined;
  /** Undefined when the server reports no waits by kind. */
  waitsByKind: KindWaits[] | undefined;
}

export interface Phase {
  name: string;
  small: Timed[];
  metrics: PhaseMetrics;
}

export interface FairnessReport {
  /** When the heavy keys began (performance.now() of the drill). */
  heavyFrom: number;
  alone: Phase;
  beside: Phase;
  heavy: Timed[];
  slowdown: number;
  passed: boolean;
}

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const p = (requests: Timed[], q: number) =>
  percentile(
    requests.map((r) => r.ms),
    q,
  );
const failed = (requests: Timed[]) => requests.filter((r) => r.status !== 200).length;

/** A histogram's count, sum and count at or under 0.1 s per kind, from Prometheus' text format. */
function waitHistogram(text: string) {
  const byKind = new Map<string, { count: number; sum: number; upTo100ms: number }>();
  const of = (kind: string) => {
    const found = byKind.get(kind) ?? { count: 0, sum: 0, upTo100ms: 0 };
    byKind.set(kind, found);
    return found;
  };
  const pattern = /^gwapi_db_connection_wait_seconds_(bucket|sum|count)\{([^}]*)\} (\S+)$/gm;
  for (const [, part, labels, value] of text.matchAll(pattern)) {
    const kind = /kind="([^"]*)"/.exec(labels!)?.[1];
    if (!kind) continue;
    if (part === 'sum') of(kind).sum = Number(value);
    else if (part === 'count') of(kind).count = Number(value);
    else if (/le="0\.1"/.test(labels!)) of(kind).upTo100ms = Number(value);
  }
  return byKind;
}

/** Reads the metrics listener every second until stopped. */
function watchMetrics(metricsBase: string) {
  let mostWaiting: number | undefined;
  let eventLoopP99Ms: number | undefined;
  let first: ReturnType<typeof waitHistogram> | undefined;
  let last: ReturnType<typeof waitHistogram> | undefined;
  let running = true;
  const sample = async () => {
    const text = await fetch(`${metricsBase}/metrics`)
      .then((response) => response.text())
      .catch(() => '');
    const waiting = /^gwapi_db_connections\{state="waiting"\} (\d+)/m.exec(text);
    if (waiting) mostWaiting = Math.max(mostWaiting ?? 0, Number(waiting[1]));
    const lag = /^nodejs_eventloop_lag_p99_seconds (\S+)/m.exec(text);
    if (lag) eventLoopP99Ms = Math.max(eventLoopP99Ms ?? 0, Number(lag[1]) * 1000);
    if (text) {
      last = waitHistogram(text);
      first ??= last;
    }
  };
  const sampling = (async () => {
    while (running) {
      await sample();
      await sleep(1000);
    }
  })();
  return {
    async stop(): Promise<PhaseMetrics> {
      running = false;
      await sampling;
      await sample();
      const waitsByKind =
        first && last && last.size > 0
          ? [...last].map(([kind, end]) => {
              const start = first!.get(kind) ?? { count: 0, sum: 0, upTo100ms: 0 };
              const waits = end.count - start.count;
              return {
                kind,
                waits,
                meanMs: waits > 0 ? ((end.sum - start.sum) / waits) * 1000 : 0,
                over100ms: waits - (end.upTo100ms - start.upTo100ms),
              };
            })
          : undefined;
      return { mostWaiting, eventLoopP99Ms, waitsByKind };
    },
  };
}

/**
 * The heavy keys' loops in a worker thread (heavyPulls.ts), loaded and waiting: `start` starts them,
 * `stop` resolves with what they got.
 */
async function heavyPulls(data: HeavyPullsData) {
  const worker = new Worker(new URL('./heavyPulls.ts', import.meta.url), { workerData: data });
  const failed = new Promise<never>((_, reject) => worker.once('error', reject));
  const message = () => Promise.race([new Promise((resolve) => worker.once('message', resolve)), failed]);
  await message();
  return {
    start: () => worker.postMessage('start'),
    async stop() {
      worker.postMessage('stop');
      const timed = (await message()) as Timed[];
      await worker.terminate();
      return timed;
    },
  };
}

export interface FairnessRun {
  /** The server's base URL and its metrics listener's. */
  base: string;
  metricsBase: string;
  fixture: FairnessFixture;
  /** Each phase's length. */
  phaseMs: number;
}

export async function runFairnessDrill({
  base,
  metricsBase,
  fixture,
  phaseMs,
}: FairnessRun): Promise<FairnessReport> {
  const { tubes, smallKeys, heavyKeys } = fixture;
  const day = (instant: number) => new Date(Date.parse(SERIES_START) + instant * 86_400_000).toISOString();
  const smallAgents = smallKeys.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const heavy = await heavyPulls({
    url: `${base}${PULL_PATH}`,
    keys: heavyKeys,
    loopsPerKey: HEAVY_LOOPS_PER_KEY,
    periodMs: PERIOD_MS,
  });
  try {
    // The metrics of a phase are watched from its first request on.
    const watchAlone = watchMetrics(metricsBase);
    const small = loops(smallKeys.length, PERIOD_MS, (loop) => {
      const tube = tubes[Math.floor(Math.random() * tubes.length)]!;
      const first = Math.floor(Math.random() * 365);
      const path = seriesPath(tube.identifier, day(first), day(first + 1));
      return timedGet(smallAgents[loop]!, `${base}${path}`, smallKeys[loop]!);
    });
    await sleep(phaseMs);
    const heavyFrom = performance.now();
    const aloneMetrics = await watchAlone.stop();
    const watchBeside = watchMetrics(metricsBase);
    heavy.start();
    await sleep(phaseMs);
    const heavyTo = performance.now();
    const besideMetrics = await watchBeside.stop();
    const [, heavyDone] = await Promise.all([small.stop(), heavy.stop()]);

    const alone = small.done.filter((r) => r.startedAt < heavyFrom);
    const beside = small.done.filter((r) => r.startedAt >= heavyFrom && r.startedAt < heavyTo);
    const slowdown = p(beside, 99) / p(alone, 99);
    return {
      heavyFrom,
      alone: { name: 'alone', small: alone, metrics: aloneMetrics },
      beside: { name: 'beside the heavy keys', small: beside, metrics: besideMetrics },
      heavy: heavyDone,
      slowdown,
      passed: failed(alone) + failed(beside) === 0 && slowdown <= P99_BOUND,
    };
  } finally {
    for (const agent of smallAgents) agent.destroy();
  }
}

const shown = (value: number | undefined, unit: (v: number) => string = String) =>
  value === undefined ? 'not sampled' : unit(value);

export function printFairnessReport(report: FairnessReport): void {
  const phases = [report.alone, report.beside];
  printTable(
    [
      'small requests (1-day series)',
      'requests',
      'not 200',
      'p50',
      'p99',
      'max',
      'most waiting for a connection',
      'event-loop delay p99',
    ],
    phases.map(({ name, small, metrics }) => [
      name,
      count(small.length),
      count(failed(small)),
      ...[50, 99, 100].map((q) => ms(p(small, q))),
      shown(metrics.mostWaiting),
      shown(metrics.eventLoopP99Ms, ms),
    ]),
  );
  const kinds = phases.flatMap(({ name, metrics }) =>
    (metrics.waitsByKind ?? [])
      .filter((waits) => waits.waits > 0)
      .map((waits) => [name, waits.kind, count(waits.waits), ms(waits.meanMs), count(waits.over100ms)]),
  );
  if (phases.some(({ metrics }) => metrics.waitsByKind === undefined)) {
    console.log('waits for a connection by kind: not reported by this server\n');
  } else {
    printTable(['waits for a connection', 'kind', 'waits', 'mean', 'over 100 ms'], kinds, [0, 1]);
  }
  const slowest = [...report.beside.small].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(
    `slowest beside the heavy keys: ${slowest
      .map((r) => `${ms(r.ms)} at +${((r.startedAt - report.heavyFrom) / 1000).toFixed(1)} s`)
      .join(', ')}`,
  );
  const pulls = report.heavy.filter((r) => r.status === 200);
  const refused = report.heavy.filter((r) => r.status === 503).length;
  console.log(
    `heavy keys: ${pulls.length} whole network years, median ${ms(p(pulls, 50))}; ` +
      `${refused} answered 503, ${report.heavy.length - pulls.length - refused} otherwise not whole`,
  );
  console.log(
    `p99 beside / alone: ${ratio(report.slowdown)} (bound ≤ ${P99_BOUND}×)\n${report.passed ? 'PASS' : 'FAIL'}`,
  );
}

/**
 * The fairness drill (testkit/drills/fairnessDrill.ts), shortened: one real `gwapi serve` with its
 * default limits (in a Redis of its own) and pool, a network of 200 tubes with a year of hourly data,
 * 16 keys asking for 1-day series alone and then beside 4 keys pulling the network's year at their
 * concurrency limit. What must hold here is what the mechanism promises, not a timing: no small
 * request fails, none waits for a connection behind the heavy keys' documents (1.3.0 kept them waiting
 * seconds), every heavy request is whole or a 503 at its share, and waits are reported by kind. The
 * p99 ratio, a timing that other work on the machine moves, is printed; `npm run fairness` (the long
 * run, on a machine of its own) gives that verdict.
 */
import t from 'tap';
import {
  addFairnessFixture,
  HEAVY_KEYS,
  HEAVY_LOOPS_PER_KEY,
  P99_BOUND,
  printFairnessReport,
  runFairnessDrill,
} from '../../testkit/drills/fairnessDrill.js';
import { startRedis } from '../../testkit/redis.js';
import { freshDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/serve.js';

/** Some 190 small requests a phase, beside a dozen heavy pulls. */
const PHASE_MS = 30_000;
const METRICS_PORT = 20_000 + Math.floor(Math.random() * 20_000);

t.test('small requests beside heavy keys', async (t) => {
  const { url, sql } = await freshDatabase(t);
  const fixture = await addFairnessFixture(sql, { wells: 50, stepMinutes: 60 });
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const server = await startReplica(t, {
    DATABASE_URL: url,
    REDIS_URL: redis.url,
    METRICS_PORT: String(METRICS_PORT),
  });
  const report = await runFairnessDrill({
    base: server.base,
    metricsBase: `http://127.0.0.1:${METRICS_PORT}`,
    fixture,
    phaseMs: PHASE_MS,
  });
  const printed: string[] = [];
  const log = console.log;
  console.log = (...lines: unknown[]) => printed.push(lines.join(' '));
  try {
    printFairnessReport(report);
  } finally {
    console.log = log;
  }
  t.comment(printed.join('\n'));

  const { alone, beside, heavy } = report;
  t.ok(alone.small.length >= 40 && beside.small.length >= 40, 'small requests in both phases');
  t.same(
    [...alone.small, ...beside.small].filter((r) => r.status !== 200),
    [],
    'no small request failed',
  );
  t.comment(`p99 beside / alone: ${report.slowdown.toFixed(2)} (the long run's bound: ${P99_BOUND})`);
  const shortWaits = beside.metrics.waitsByKind?.filter(({ kind }) => kind === 'series' || kind === 'key');
  t.same(
    shortWaits?.filter((waits) => waits.over100ms > 0),
    [],
    'beside the heavy keys, no key lookup or series waited 100 ms for a connection',
  );
  const pulls = heavy.filter((r) => r.status === 200);
  t.ok(pulls.length >= HEAVY_KEYS * HEAVY_LOOPS_PER_KEY, `${pulls.length} whole network years beside them`);
  t.same(
    heavy.filter((r) => r.status !== 200 && r.status !== 503),
    [],
    'a heavy request is whole, or refused with 503 at its share of the pool',
  );
  const kinds = beside.metrics.waitsByKind?.filter((waits) => waits.waits > 0).map((waits) => waits.kind);
  t.same(
    ['network', 'series'].filter((kind) => kinds?.includes(kind)),
    ['network', 'series'],
    `waits for a connection reported by kind: ${kinds?.join(', ')}`,
  );
});

/**
 * Limits benchmark: what the limiter adds to each request, in memory (no REDIS_URL) and through Redis.
 * One request's share is an admit (token + slot) and the release of its slot; a failed-auth count is
 * measured apart. Sequential: the latency one request pays. 64 in parallel: the throughput of one
 * process. Prints µs per operation and operations per second, best of the runs (noise only adds time).
 *
 *   node --import tsx bench/limits.ts [OPERATIONS] [RUNS]    (REDIS_URL, or a throwaway redis-server)
 */
import { loadSettings } from '../src/config.js';
import type { StoreClientLimits } from '../src/limits/clientLimits.js';
import { createClientLimits } from '../src/limits/createClientLimits.js';
import { requirePrerequisites, throwawayRedis } from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';

requirePrerequisites([throwawayRedis]);

const OPERATIONS = Number(process.argv[2] ?? 20_000);
const RUNS = Number(process.argv[3] ?? 3);
const PARALLEL = 64;

// Limits high enough that nothing is refused: the cost of a refusal is a cheaper path.
const settings = loadSettings({ RATE_LIMIT_BURST: '1000000', CONCURRENCY_LIMIT: '1000' });
const logger = { info: console.log, warn: console.warn };

const redis = await redisOrThrowaway(process.env.REDIS_URL);

async function admitAndRelease(limits: StoreClientLimits, key: string): Promise<void> {
  const admission = await limits.admit(key);
  if (!admission.admitted) throw new Error(`refused (${admission.reason}): the benchmark limits are too low`);
  await admission.release();
}

/** Best time over RUNS of `operations` calls spread over `workers` loops; each worker has its own key. */
async function best(workers: number, operation: (key: string) => Promise<unknown>): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: workers }, async (_, worker) => {
        const key = `key_bench_${run}_${worker}`;
        for (let i = worker; i < OPERATIONS; i += workers) await operation(key);
      }),
    );
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

function report(store: string, what: string, ms: number): void {
  const us = (ms * 1000) / OPERATIONS;
  const perSecond = Math.round(OPERATIONS / (ms / 1000));
  console.log(
    `${store.padEnd(7)} ${what.padEnd(38)} ${us.toFixed(2).padStart(8)} µs/op ${String(perSecond).padStart(9)} ops/s`,
  );
}

try {
  for (const [store, url] of [
    ['memory', undefined],
    ['redis', redis.url],
  ] as const) {
    const limits = await createClientLimits(
      { ...settings, REDIS_URL: url },
      { logger, keyPrefix: 'gwapi-bench:' },
    );
    try {
      await best(1, (key) => admitAndRelease(limits, key)); // warm up: JIT, script loading
      report(store, 'admit + release, one at a time', await best(1, (key) => admitAndRelease(limits, key)));
      report(
        store,
        `admit + release, ${PARALLEL} in parallel`,
        await best(PARALLEL, (key) => admitAndRelease(limits, key)),
      );
      let address = 0;
      // Fresh addresses: a limited one would only measure the refusal.
      report(
        store,
        'failed-auth count, one at a time',
        await best(1, () => limits.admitFailedAuth(`10.${address++}`)),
      );
    } finally {
      await limits.close();
    }
  }
} finally {
  await redis.stop();
}

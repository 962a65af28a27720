/**
 * Redis failing under a running service: each test runs its own redis-server child, stops it and
 * starts it again on the same port. Requests must keep their answers (in-process limits meanwhile),
 * never wait on the dead Redis, and shared limiting must come back by itself, logged once each way.
 */
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { freePort } from '../../src/db/embedded.js';
import type { StoreClientLimits } from '../../src/limits/clientLimits.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { type RedisServer, startRedis } from '../../testkit/redis.js';
import { type RecordingLogger, recordingLogger, settingsWith, sleep, unique } from '../helpers/limits.js';

/** A bucket that will not run dry during the test, and one slot per key. */
const env = { RATE_LIMIT_BURST: '1000', RATE_LIMIT_PER_SECOND: '0.01', CONCURRENCY_LIMIT: '1' };
const keyPrefix = `${unique('gwapi-test:')}:`;

async function replica(
  t: Test,
  url: string,
  logger: RecordingLogger = recordingLogger(),
  extra: Record<string, string> = {},
) {
  const limits = await createClientLimits(
    settingsWith({ ...env, REDIS_URL: url, CONCURRENCY_LEASE_SECONDS: '1.5', ...extra }),
    { logger, keyPrefix, probeIntervalMs: 200 },
  );
  t.teardown(() => limits.close());
  return limits;
}

/** Requests one after another until stopped, as a client would send them; records what came back. */
function keepRequesting(limits: StoreClientLimits, key: string) {
  let running = true;
  const seen = { answered: 0, errors: [] as unknown[], slowestMs: 0 };
  const done = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const admission = await limits.admit(key);
        if (admission.admitted) await admission.release();
        await limits.admitFailedAuth('192.0.2.1');
        seen.answered++;
      } catch (error) {
        seen.errors.push(error);
      }
      seen.slowestMs = Math.max(seen.slowestMs, performance.now() - started);
      await sleep(5);
    }
  })();
  return async () => {
    running = false;
    await done;
    return seen;
  };
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

const levels = (logger: RecordingLogger) => logger.lines.map((line) => line.level);

/** Proof that `limits` writes to Redis: a replica started now sees the token it took. */
async function sharesWithNewReplica(t: Test, limits: StoreClientLimits, url: string) {
  const key = unique('key_');
  const fresh = await replica(t, url);
  const first = await limits.admit(key);
  if (first.admitted) await first.release();
  t.match(first, { admitted: true, rate: { remaining: 999 } });
  t.match(await fresh.admit(key), { admitted: true, rate: { remaining: 998 } }, 'the new replica saw it');
}

t.test('Redis stopped and restarted under use', async (t) => {
  let redis: RedisServer = await startRedis();
  t.teardown(() => redis.stop());
  const logger = recordingLogger();
  const limits = await replica(t, redis.url, logger);
  const longDownload = await limits.admit('key_long');
  t.equal(longDownload.admitted, true, 'a long response holds the only slot of key_long');
  const stop = keepRequesting(limits, 'key_traffic');

  await sleep(300);
  await redis.stop();
  await sleep(1000);
  const latencies: number[] = [];
  for (let request = 0; request < 20; request++) {
    const started = performance.now();
    const admission = await limits.admit(unique('key_'));
    latencies.push(performance.now() - started);
    t.equal(admission.admitted, true, 'admitted while Redis is down');
    if (admission.admitted) await admission.release();
  }
  // Once the switch is made, requests go to memory without touching Redis (only a probe per interval
  // does): a fraction of a millisecond, not a wait on a reconnection attempt.
  const median = latencies.sort((a, b) => a - b)[10] ?? Infinity;
  t.ok(median < 50, `answered at once while Redis is down (median ${median.toFixed(2)} ms)`);
  await sleep(2000);
  t.same(levels(logger), ['warn'], 'the switch to in-process limits is logged once');
  t.match(logger.lines[0]?.message, /Redis is unavailable/);

  redis = await startRedis(redis.port);
  t.ok(await until(() => logger.lines.length > 1, 10_000), 'shared limiting resumed by itself');
  await sleep(1000);
  const seen = await stop();

  t.same(seen.errors, [], 'no request failed');
  t.ok(seen.answered > 50, `requests kept being answered (${seen.answered})`);
  // The first request after the drop and each probe touch Redis; the fail-fast client options and the
  // command timeout keep them far below the 3 s the outage lasts.
  t.ok(
    seen.slowestMs < 1500,
    `no request waited on the dead Redis (slowest ${Math.round(seen.slowestMs)} ms)`,
  );
  t.same(levels(logger), ['warn', 'info'], 'the way back is logged once too');
  t.match(logger.lines[1]?.message, /Redis answers again/);

  await sharesWithNewReplica(t, limits, redis.url);
  // The long response renewed its lease into the restarted, empty Redis.
  const other = await replica(t, redis.url);
  t.match(
    await other.admit('key_long'),
    { admitted: false, reason: 'concurrency' },
    'its slot is held again',
  );
  if (longDownload.admitted) await longDownload.release();
  t.equal((await other.admit('key_long')).admitted, true);
});

t.test('Redis down at start: limits start in process and share once Redis comes up', async (t) => {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const logger = recordingLogger();
  const limits = await replica(t, url, logger);
  t.same(levels(logger), ['warn'], 'said so at start');
  t.equal((await limits.admit(unique('key_'))).admitted, true);
  t.same(await limits.admitFailedAuth('192.0.2.1'), { admitted: true });

  const redis = await startRedis(port);
  t.teardown(() => redis.stop());
  t.ok(await until(() => logger.lines.length > 1, 10_000), 'shared limiting began by itself');
  t.same(levels(logger), ['warn', 'info']);
  await sharesWithNewReplica(t, limits, url);
});

t.test('Redis too slow to answer: limits in process meanwhile, shared again once it answers', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const logger = recordingLogger();
  const limits = await replica(t, redis.url, logger, { REDIS_COMMAND_TIMEOUT_MS: '200' });
  const stop = keepRequesting(limits, 'key_traffic');
  await sleep(200);
  // The connection stays up, so only a request finding Redis answering again can end the fallback.
  const admin = new Redis(redis.url);
  t.teardown(() => admin.quit());
  await admin.call('CLIENT', 'PAUSE', '2000', 'ALL');
  await sleep(1000);
  t.same(levels(logger), ['warn'], 'timeouts switch to in-process limits, logged once');
  t.match(logger.lines[0]?.message, /timed out/i);
  t.ok(await until(() => logger.lines.length > 1, 10_000), 'shared limiting resumed by itself');
  const seen = await stop();
  t.same(seen.errors, [], 'no request failed');
  t.ok(seen.slowestMs < 1000, `no request waited out the pause (slowest ${Math.round(seen.slowestMs)} ms)`);
  t.same(levels(logger), ['warn', 'info']);
  await sharesWithNewReplica(t, limits, redis.url);
});

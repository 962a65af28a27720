/**
 * The limits shared through a real Redis (TEST_REDIS_URL), in real time. Two limiter instances on one
 * Redis stand for two replicas; a key prefix unique to this run keeps other files and runs apart.
 */
import t, { type Test } from 'tap';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { limitParameters } from '../../src/limits/parameters.js';
import { connectLimitsRedis, whenReady } from '../../src/limits/redisConnection.js';
import { RedisLimitStore } from '../../src/limits/redisStore.js';
import { recordingLogger, settingsWith, sleep, testRedisUrl, unique } from '../helpers/limits.js';
import { limitsContract } from './contract.js';

const keyPrefix = `${unique('gwapi-test:')}:`;
const loggers: ReturnType<typeof recordingLogger>[] = [];

/** A replica: its own Redis connection, as a separate process would have. */
async function replica(t: Test, env: Record<string, string> = {}) {
  const logger = recordingLogger();
  loggers.push(logger);
  const limits = await createClientLimits(settingsWith({ ...env, REDIS_URL: testRedisUrl() }), {
    logger,
    keyPrefix,
  });
  t.teardown(() => limits.close());
  return limits;
}

limitsContract(t, {
  async open(t, env = {}) {
    const limits = await replica(t, env);
    const redis = connectLimitsRedis(settingsWith({ REDIS_URL: testRedisUrl() }), 1000);
    t.teardown(() => redis.quit());
    t.equal(await whenReady(redis, 2000), undefined);
    const deadReplica = new RedisLimitStore(redis, limitParameters(settingsWith(env)), keyPrefix);
    return { limits, deadReplica };
  },
  advance: (ms) => sleep(ms),
});

t.test('two replicas share one bucket: 30 + 30, then both refuse', async (t) => {
  const [a, b] = [await replica(t), await replica(t)];
  const key = unique('key_');
  const started = performance.now();
  for (const [limits, name] of [
    [a, 'a'],
    [b, 'b'],
  ] as const) {
    for (let request = 1; request <= 30; request++) {
      const admission = await limits.admit(key);
      if (!admission.admitted) return t.fail(`request ${request} to ${name} was refused`);
      await admission.release();
    }
  }
  t.ok(performance.now() - started < 1000, 'the 60 requests took under a second');
  t.same(await a.admit(key), { admitted: false, reason: 'rate', retryAfterSeconds: 2 });
  t.same(await b.admit(key), { admitted: false, reason: 'rate', retryAfterSeconds: 2 });
});

t.test('two replicas share the concurrency slots of a key', async (t) => {
  const [a, b] = [await replica(t), await replica(t)];
  const key = unique('key_');
  const onA = await a.admit(key);
  const onB = await b.admit(key);
  t.ok(onA.admitted && onB.admitted, 'one request in flight on each replica');
  t.match(await a.admit(key), { admitted: false, reason: 'concurrency' });
  t.match(await b.admit(key), { admitted: false, reason: 'concurrency' });
  if (onA.admitted) await onA.release();
  t.equal((await b.admit(key)).admitted, true, "a's released slot is free on b");
});

t.test('a request that outlives the lease keeps its slot while it is renewed', async (t) => {
  // Lease 1.5 s, renewed every 0.5 s: a renewal may come up to a second late before the slot is lost.
  const env = { CONCURRENCY_LEASE_SECONDS: '1.5' };
  const [a, b] = [await replica(t, env), await replica(t, env)];
  const key = unique('key_');
  const first = await a.admit(key);
  const second = await b.admit(key);
  t.ok(first.admitted && second.admitted);
  await sleep(4000);
  t.match(await a.admit(key), { admitted: false, reason: 'concurrency' }, 'both slots still held');
  if (second.admitted) await second.release();
  t.equal((await a.admit(key)).admitted, true);
});

t.test('Redis stayed available: nothing was logged', async (t) => {
  t.ok(loggers.length > 0);
  t.same(
    loggers.flatMap((logger) => logger.lines),
    [],
  );
});

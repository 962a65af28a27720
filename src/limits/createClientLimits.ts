/**
 * The limits a replica runs with: shared through Redis (REDIS_URL, REDIS_SENTINELS or an injected client), falling back
 * to this process while Redis is unavailable; or in process only, without Redis.
 */
import type { Redis } from 'ioredis';
import type { Settings } from '../config.js';
import { explainConnectionFailure } from '../connectionFailure.js';
import { StoreClientLimits } from './clientLimits.js';
import { FailoverStore, type LimitsLogger } from './failover.js';
import { type Clock, MemoryLimitStore, monotonicClock } from './memoryStore.js';
import { type LimitSettings, limitParameters } from './parameters.js';
import {
  connectLimitsRedis,
  limitsRedisTarget,
  sharedLimitsConfigured,
  whenReady,
} from './redisConnection.js';
import { RedisLimitStore } from './redisStore.js';

export type ClientLimitsSettings = LimitSettings &
  Pick<Settings, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME' | 'REDIS_COMMAND_TIMEOUT_MS'>;

export interface ClientLimitsDependencies {
  logger: LimitsLogger;
  /**
   * A client to use instead of connecting to REDIS_URL; its owner closes it. It should fail fast as
   * `connectLimitsRedis` configures it, or requests wait for a Redis that does not answer.
   */
  redis?: Redis;
  /** Milliseconds, for the in-process limits and the return to Redis (tests step it). */
  clock?: Clock;
  /** Prefix of every Redis key, to keep deployments (or test files) sharing one Redis apart. */
  keyPrefix?: string;
  /** How often (ms) a replica limiting on its own tries Redis again. */
  probeIntervalMs?: number;
}

/** How long a starting replica waits for Redis before it begins limiting on its own. */
const START_WAIT_MS = 2000;

/** A Redis this replica connected to itself failed at start: say which setting points where. */
function explainedForSettings(error: Error | undefined, settings: ClientLimitsSettings | undefined) {
  if (!error || !settings) return error;
  const explained = explainConnectionFailure(error, limitsRedisTarget(settings), ' ');
  return explained ? new Error(explained, { cause: error }) : error;
}

export async function createClientLimits(
  settings: ClientLimitsSettings,
  dependencies: ClientLimitsDependencies,
): Promise<StoreClientLimits> {
  const parameters = limitParameters(settings);
  const clock = dependencies.clock ?? monotonicClock;
  const local = new MemoryLimitStore(parameters, clock);
  const owned =
    dependencies.redis || !sharedLimitsConfigured(settings)
      ? undefined
      : connectLimitsRedis(settings, settings.REDIS_COMMAND_TIMEOUT_MS);
  const redis = dependencies.redis ?? owned;
  if (!redis) return new StoreClientLimits(local, parameters);

  const store = new FailoverStore(
    new RedisLimitStore(redis, parameters, dependencies.keyPrefix ?? 'gwapi:limits:'),
    local,
    {
      logger: dependencies.logger,
      clock,
      probeIntervalMs: dependencies.probeIntervalMs ?? 1000,
      startLocal: explainedForSettings(await whenReady(redis, START_WAIT_MS), owned && settings),
    },
  );
  const onReady = () => store.redisReady();
  redis.on('ready', onReady);
  return new StoreClientLimits(store, parameters, {
    async close() {
      redis.off('ready', onReady);
      if (!owned) return;
      if (owned.status === 'ready') await owned.quit().catch(() => owned.disconnect());
      else owned.disconnect();
    },
    // The store notices a failure only when a call fails; the connection's status says at once that
    // Redis went away, even while no request comes in.
    state: () => (store.isShared && redis.status === 'ready' ? 'shared' : 'fallback'),
  });
}

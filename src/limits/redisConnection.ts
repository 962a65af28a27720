/** The ioredis client the limits need: one that fails fast instead of making requests wait for Redis. */
import { Redis, type RedisOptions } from 'ioredis';
import type { Settings } from '../config.js';
import { type ConnectionTarget, connectionTarget } from '../connectionFailure.js';

type RedisSettings = Pick<Settings, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME'>;

/** Whether the settings name a Redis for the limits at all (a URL, or sentinels). */
export const sharedLimitsConfigured = (settings: Pick<Settings, 'REDIS_URL' | 'REDIS_SENTINELS'>): boolean =>
  Boolean(settings.REDIS_URL || settings.REDIS_SENTINELS);

/**
 * A URL alone, or Sentinel: ioredis asks the sentinels for the master of REDIS_SENTINEL_NAME, and asks
 * again after a failover (the connection drops; the limits fall back to this process meanwhile).
 */
export function connectLimitsRedis(settings: RedisSettings, commandTimeoutMs: number): Redis {
  const failFast: RedisOptions = {
    // While disconnected, a command fails at once (and the request is limited in memory) instead of
    // queueing until Redis returns.
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
    // A command caught by a dropped connection fails instead of being sent again after reconnecting.
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    // Keep reconnecting, at least once a second, so shared limits resume soon after Redis returns.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  };
  const options: RedisOptions = settings.REDIS_SENTINELS
    ? { sentinels: settings.REDIS_SENTINELS, name: settings.REDIS_SENTINEL_NAME, ...failFast }
    : failFast;
  // ioredis reads credentials, database and TLS from the URL; with sentinels it ignores its host and port.
  const redis = settings.REDIS_URL ? new Redis(settings.REDIS_URL, options) : new Redis(options);
  // Failures are reported by the limits (once per switch); without a listener ioredis would print
  // every reconnection attempt.
  redis.on('error', () => {});
  return redis;
}

/** What the settings point the limits at, for messages: the sentinels if any, else REDIS_URL. */
export function limitsRedisTarget(settings: RedisSettings): ConnectionTarget {
  const url = connectionTarget('REDIS_URL', 'Redis', settings.REDIS_URL ?? 'redis://localhost');
  if (!settings.REDIS_SENTINELS) return url;
  const address = settings.REDIS_SENTINELS.map(({ host, port }) => `${host}:${port}`).join(',');
  return { ...url, setting: 'REDIS_SENTINELS', address, host: settings.REDIS_SENTINELS[0]?.host };
}

/** Waits until `redis` can take commands; resolves with the reason if it cannot within `timeoutMs`. */
export function whenReady(redis: Redis, timeoutMs: number): Promise<Error | undefined> {
  if (redis.status === 'ready') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const finish = (result: Error | undefined) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(result);
    };
    const onReady = () => finish(undefined);
    const onError = (error: Error) => finish(error);
    const timer = setTimeout(
      () => finish(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}

/** The ioredis client the limits need: one that fails fast instead of making requests wait for Redis. */
import { Redis } from 'ioredis';

export function connectLimitsRedis(url: string, commandTimeoutMs: number): Redis {
  const redis = new Redis(url, {
    // While disconnected, a command fails at once (and the request is limited in memory) instead of
    // queueing until Redis returns.
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
    // A command caught by a dropped connection fails instead of being sent again after reconnecting.
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    // Keep reconnecting, at least once a second, so shared limits resume soon after Redis returns.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  // Failures are reported by the limits (once per switch); without a listener ioredis would print
  // every reconnection attempt.
  redis.on('error', () => {});
  return redis;
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
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}

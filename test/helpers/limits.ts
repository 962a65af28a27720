/**
 * Shared pieces of the limits tests: settings, a logger that records, unique names, real waiting, limits
 * shared through a Redis of a test's own.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { loadSettings, type Settings } from '../../src/config.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import type { LimitsLogger } from '../../src/limits/failover.js';
import { startRedis } from '../../testkit/redis.js';

export { sleep };

/** Settings as the service would load them: the contract's defaults with `env` on top. */
export function settingsWith(env: Record<string, string> = {}): Settings {
  return loadSettings(env);
}

export function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error('TEST_REDIS_URL is not set: run the suite with `npm test`');
  return url;
}

/** A name no other test (or earlier run on the same Redis) uses. */
export function unique(prefix: string): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

export interface RecordingLogger extends LimitsLogger {
  lines: { level: 'info' | 'warn'; message: string }[];
}

export function recordingLogger(): RecordingLogger {
  const lines: RecordingLogger['lines'] = [];
  return {
    lines,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
  };
}

/**
 * Limits shared through a redis-server of the test's own, which the test may stop (and start again on
 * its port) to see them fall back; both closed at the test's end.
 */
export async function limitsOnOwnRedis(t: Test, keyPrefix: string) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const limits = await createClientLimits(settingsWith({ REDIS_URL: redis.url }), {
    logger: recordingLogger(),
    keyPrefix: unique(keyPrefix),
  });
  t.teardown(() => limits.close());
  return { redis, limits };
}

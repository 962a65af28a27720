/** The limit settings turned into the integer units both stores compute in (microseconds, counts). */
import type { Settings } from '../config.js';

export interface LimitParameters {
  /** Bucket size: requests allowed in a burst. */
  burst: number;
  /** Microseconds between two tokens (1 / rate), an integer so Lua and TypeScript compute alike. */
  tokenIntervalUs: number;
  /** Requests of one key in flight at once. */
  concurrency: number;
  /** How long a concurrency slot lives without renewal. */
  leaseUs: number;
  /** Failed-auth requests allowed per address per window. */
  failedAuthLimit: number;
  failedAuthWindowSeconds: number;
}

export type LimitSettings = Pick<
  Settings,
  | 'RATE_LIMIT_BURST'
  | 'RATE_LIMIT_PER_SECOND'
  | 'CONCURRENCY_LIMIT'
  | 'CONCURRENCY_LEASE_SECONDS'
  | 'FAILED_AUTH_LIMIT'
  | 'FAILED_AUTH_WINDOW_SECONDS'
>;

export function limitParameters(settings: LimitSettings): LimitParameters {
  return {
    burst: settings.RATE_LIMIT_BURST,
    tokenIntervalUs: Math.round(1_000_000 / settings.RATE_LIMIT_PER_SECOND),
    concurrency: settings.CONCURRENCY_LIMIT,
    leaseUs: Math.round(settings.CONCURRENCY_LEASE_SECONDS * 1_000_000),
    failedAuthLimit: settings.FAILED_AUTH_LIMIT,
    failedAuthWindowSeconds: settings.FAILED_AUTH_WINDOW_SECONDS,
  };
}

/** Whole seconds a client should wait: rounded up, never 0 (a 429 with `Retry-After: 0` invites a hot loop). */
export function retryAfterSeconds(waitUs: number): number {
  return Math.max(1, Math.ceil(waitUs / 1_000_000));
}

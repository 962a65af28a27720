/**
 * The seam between the request path and client limits. The API calls `admit` once per authenticated
 * request (admitClient.ts) and `release` when the response has been sent or aborted;
 * `admitFailedAuth` guards requests without a valid key.
 */

export interface RateLimitState {
  /** Bucket size (the burst). */
  limit: number;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until the next token comes back: RateLimit's `t` (admitClient.ts). */
  resetSeconds: number;
}

/** The policy behind `RateLimit-Policy` (IETF draft): `quota` tokens, all back after `windowSeconds`. */
export interface RateLimitPolicy {
  /** The bucket size (the burst). */
  quota: number;
  /** Seconds an empty bucket takes to fill: quota / windowSeconds is the sustained rate. */
  windowSeconds: number;
}

export type Admission =
  | { admitted: true; rate: RateLimitState; release(): void }
  | { admitted: false; reason: 'rate' | 'concurrency' | 'failed-auth'; retryAfterSeconds: number };

/**
 * Where limits are kept right now: `in-process` (no Redis configured: correct for one replica),
 * `shared` (in Redis, by all replicas), `fallback` (Redis configured but not answering: each replica
 * limits on its own until it answers again).
 */
export type LimitsState = 'in-process' | 'shared' | 'fallback';

export interface ClientLimits {
  /** The rate policy to advertise; absent when limits are lifted. */
  readonly policy?: RateLimitPolicy;
  /** Where the limits are kept now, for readiness and metrics; no I/O. Absent when limits are lifted. */
  state?(): LimitsState;
  /** Takes one token and one concurrency slot of `keyId`. */
  admit(keyId: string): Promise<Admission>;
  /** Counts a request with a missing or invalid key from `address`. */
  admitFailedAuth(
    address: string,
  ): Promise<{ admitted: true } | { admitted: false; retryAfterSeconds: number }>;
  close(): Promise<void>;
}

/** Limits lifted (LIMITS_ENABLED=false, or until the real limiter is wired in). */
export const unlimited: ClientLimits = {
  async admit() {
    return { admitted: true, rate: { limit: 0, remaining: 0, resetSeconds: 0 }, release() {} };
  },
  async admitFailedAuth() {
    return { admitted: true };
  },
  async close() {},
};

/**
 * The token bucket as GCRA (generic cell rate algorithm): instead of a token count and a refill time it
 * keeps one number per key, the theoretical arrival time (TAT) of the next request when the client runs
 * at exactly the sustained rate. It is the same bucket (size `burst`, one token per `intervalUs`,
 * starting full) in integer microseconds, so it needs no floats and fits in one Redis string.
 * `redisScripts.ts` holds the same arithmetic in Lua; change both together.
 */

export type TokenDecision =
  | { allowed: true; arrival: number; nextTokenUs: number; remaining: number }
  | { allowed: false; waitUs: number };

/** `arrival`: the stored TAT, or undefined for a key never seen (or long idle): a full bucket. */
export function takeToken(
  arrival: number | undefined,
  nowUs: number,
  intervalUs: number,
  burst: number,
): TokenDecision {
  const next = Math.max(arrival ?? nowUs, nowUs) + intervalUs;
  const waitUs = next - burst * intervalUs - nowUs;
  if (waitUs > 0) return { allowed: false, waitUs };
  return { allowed: true, arrival: next, ...bucketLevel(next - nowUs, intervalUs, burst) };
}

/**
 * Tokens left and the time until the next one comes back, from how far the TAT is ahead of now
 * (`aheadUs`, which is also the time until the bucket is full).
 */
export function bucketLevel(aheadUs: number, intervalUs: number, burst: number) {
  const remaining = Math.floor((burst * intervalUs - aheadUs) / intervalUs);
  return { remaining, nextTokenUs: aheadUs - (burst - 1 - remaining) * intervalUs };
}

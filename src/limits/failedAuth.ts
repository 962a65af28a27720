/** Failed-auth counting on a rate-limiter-flexible limiter (Redis or memory): one point per failure. */
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { FailedAuthOutcome } from './store.js';

export async function countFailedAuth(
  limiter: RateLimiterAbstract,
  address: string,
): Promise<FailedAuthOutcome> {
  try {
    await limiter.consume(address);
    return { limited: false };
  } catch (refusal) {
    // The library rejects with a RateLimiterRes when limited; anything else is a store failure.
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    return { limited: true, waitUs: refusal.msBeforeNext * 1000 };
  }
}

/**
 * Client limits whose answers a test decides, recording what the request path asks of them: the seam
 * of src/limits/types.ts seen from the API's side (the real limiter has its own tests).
 */
import type { Admission, ClientLimits } from '../../src/limits/types.js';

export interface ScriptedLimits extends ClientLimits {
  admitted: string[];
  failedAuth: string[];
  /** Slots taken and not yet released. */
  held: number;
  /** The next admit() answers this once. */
  refuseNext(reason: 'rate' | 'concurrency', retryAfterSeconds: number): void;
  refuseFailedAuth(retryAfterSeconds: number | null): void;
}

export function scriptedLimits(): ScriptedLimits {
  let refusal: Admission | undefined;
  let failedAuthRefusal: number | null = null;
  const limits: ScriptedLimits = {
    admitted: [],
    failedAuth: [],
    held: 0,
    refuseNext(reason, retryAfterSeconds) {
      refusal = { admitted: false, reason, retryAfterSeconds };
    },
    refuseFailedAuth(retryAfterSeconds) {
      failedAuthRefusal = retryAfterSeconds;
    },
    async admit(keyId) {
      limits.admitted.push(keyId);
      if (refusal) {
        const answer = refusal;
        refusal = undefined;
        return answer;
      }
      limits.held++;
      let released = false;
      return {
        admitted: true,
        rate: { limit: 60, remaining: 59, resetSeconds: 2 },
        release() {
          if (released) throw new Error('released twice');
          released = true;
          limits.held--;
        },
      };
    },
    async admitFailedAuth(address) {
      limits.failedAuth.push(address);
      return failedAuthRefusal === null
        ? { admitted: true }
        : { admitted: false, retryAfterSeconds: failedAuthRefusal };
    },
    async close() {},
  };
  return limits;
}

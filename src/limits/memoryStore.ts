/**
 * Limits kept in this process: correct for one replica, and the fallback of every replica while Redis
 * is unavailable. Same arithmetic as the Redis scripts, on an injectable clock so tests can step time.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { countFailedAuth } from './failedAuth.js';
import type { LimitParameters } from './parameters.js';
import type { AdmitOutcome, FailedAuthOutcome, HeldSlot, LimitStore } from './store.js';
import { takeToken } from './tokenBucket.js';

/** Milliseconds on a clock that never goes back. */
export type Clock = () => number;

export const monotonicClock: Clock = () => performance.now();

/** Idle entries are dropped after this many admissions, so memory follows the active keys. */
const SWEEP_EVERY = 10_000;

export class MemoryLimitStore implements LimitStore {
  /** keyId → theoretical arrival time (µs). */
  private readonly arrivals = new Map<string, number>();
  /** keyId → slotId → lease expiry (µs). */
  private readonly slots = new Map<string, Map<string, number>>();
  private readonly failedAuthLimiter: RateLimiterMemory;
  private admissionsSinceSweep = 0;

  constructor(
    private readonly parameters: LimitParameters,
    private readonly clock: Clock = monotonicClock,
  ) {
    this.failedAuthLimiter = new RateLimiterMemory({
      points: parameters.failedAuthLimit,
      duration: parameters.failedAuthWindowSeconds,
    });
  }

  async admit(keyId: string, slotId: string): Promise<AdmitOutcome> {
    const now = this.nowUs();
    if (++this.admissionsSinceSweep >= SWEEP_EVERY) this.sweep(now);
    const { burst, tokenIntervalUs, concurrency } = this.parameters;
    const token = takeToken(this.arrivals.get(keyId), now, tokenIntervalUs, burst);
    if (!token.allowed) return { kind: 'rate', waitUs: token.waitUs };
    this.arrivals.set(keyId, token.arrival);

    if (this.liveSlots(keyId, now).size >= concurrency) return { kind: 'concurrency' };
    this.hold(keyId, slotId, now);
    return {
      kind: 'admitted',
      remaining: token.remaining,
      nextTokenUs: token.nextTokenUs,
      slot: this.slot(keyId, slotId),
    };
  }

  failedAuth(address: string): Promise<FailedAuthOutcome> {
    return countFailedAuth(this.failedAuthLimiter, address);
  }

  private slot(keyId: string, slotId: string): HeldSlot {
    return {
      // Re-adds a slot that expired meanwhile: the response it belongs to is still running.
      renew: async () => this.hold(keyId, slotId, this.nowUs()),
      release: async () => {
        const held = this.slots.get(keyId);
        held?.delete(slotId);
        if (held?.size === 0) this.slots.delete(keyId);
      },
    };
  }

  private hold(keyId: string, slotId: string, now: number): void {
    const held = this.slots.get(keyId) ?? new Map<string, number>();
    held.set(slotId, now + this.parameters.leaseUs);
    this.slots.set(keyId, held);
  }

  /** The key's slots with the expired ones dropped. */
  private liveSlots(keyId: string, now: number): Map<string, number> {
    const held = this.slots.get(keyId) ?? new Map<string, number>();
    for (const [slotId, expiry] of held) if (expiry <= now) held.delete(slotId);
    return held;
  }

  private sweep(now: number): void {
    this.admissionsSinceSweep = 0;
    // A TAT in the past is a full bucket, exactly what a missing entry means.
    for (const [keyId, arrival] of this.arrivals) if (arrival <= now) this.arrivals.delete(keyId);
    for (const keyId of this.slots.keys()) {
      if (this.liveSlots(keyId, now).size === 0) this.slots.delete(keyId);
    }
  }

  private nowUs(): number {
    return Math.round(this.clock() * 1000);
  }
}

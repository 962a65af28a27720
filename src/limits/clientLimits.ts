/**
 * `ClientLimits` on a limit store: turns store outcomes into admissions (Retry-After, RateLimit
 * values) and holds each admitted request's slot as a lease, renewed until the request releases it.
 */
import { randomBytes } from 'node:crypto';
import { failedAuthSubject } from './clientAddress.js';
import { Lease } from './lease.js';
import { type LimitParameters, retryAfterSeconds } from './parameters.js';
import type { LimitStore } from './store.js';
import type { Admission, ClientLimits, LimitsState, RateLimitPolicy } from './types.js';

/** An admission whose `release` says when the slot is free (tests and shutdown wait for it). */
export type HeldAdmission = Extract<Admission, { admitted: true }> & { release(): Promise<void> };

export interface StoreClientLimitsHooks {
  /** Closes what the store uses (a Redis connection). */
  close?: () => Promise<void>;
  /** Where the store keeps limits now; in process when not given. */
  state?: () => LimitsState;
}

export class StoreClientLimits implements ClientLimits {
  readonly policy: RateLimitPolicy;
  private readonly leases = new Set<Lease>();
  /** Slot ids are unique across replicas: a random replica part and a counter. */
  private readonly replica = randomBytes(6).toString('hex');
  private slotCount = 0;

  constructor(
    private readonly store: LimitStore,
    private readonly parameters: LimitParameters,
    private readonly hooks: StoreClientLimitsHooks = {},
  ) {
    this.policy = {
      quota: parameters.burst,
      windowSeconds: Math.round((parameters.burst * parameters.tokenIntervalUs) / 1_000_000),
    };
  }

  async admit(keyId: string): Promise<HeldAdmission | Extract<Admission, { admitted: false }>> {
    const outcome = await this.store.admit(keyId, `${this.replica}:${++this.slotCount}`);
    if (outcome.kind === 'rate') {
      return { admitted: false, reason: 'rate', retryAfterSeconds: retryAfterSeconds(outcome.waitUs) };
    }
    // A slot frees up as soon as a response ends; one second is the shortest wait Retry-After can say.
    if (outcome.kind === 'concurrency')
      return { admitted: false, reason: 'concurrency', retryAfterSeconds: 1 };
    const lease = new Lease(outcome.slot, this.parameters.leaseUs / 3000, (ended) =>
      this.leases.delete(ended),
    );
    this.leases.add(lease);
    return {
      admitted: true,
      rate: {
        limit: this.parameters.burst,
        remaining: outcome.remaining,
        resetSeconds: Math.ceil(outcome.nextTokenUs / 1_000_000),
      },
      release: () => lease.release(),
    };
  }

  state(): LimitsState {
    return this.hooks.state?.() ?? 'in-process';
  }

  async admitFailedAuth(address: string) {
    const outcome = await this.store.failedAuth(failedAuthSubject(address));
    if (!outcome.limited) return { admitted: true } as const;
    return { admitted: false, retryAfterSeconds: retryAfterSeconds(outcome.waitUs) } as const;
  }

  /** Frees the slots still held (best effort: a slot left behind expires with its lease), then the store. */
  async close(): Promise<void> {
    await Promise.all([...this.leases].map((lease) => lease.release()));
    await this.hooks.close?.();
  }
}

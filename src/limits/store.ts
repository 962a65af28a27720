/**
 * What a limit store does, in Redis (shared by all replicas) or in memory (this process only). Both
 * implement the same arithmetic; `FailoverStore` moves between them when Redis fails and returns.
 */

/** A concurrency slot held in a store; renew keeps it past its lease, release frees it. */
export interface HeldSlot {
  renew(): Promise<void>;
  release(): Promise<void>;
}

export type AdmitOutcome =
  /** A token was taken and a slot is held. `nextTokenUs`: until the bucket holds one more token. */
  | { kind: 'admitted'; remaining: number; nextTokenUs: number; slot: HeldSlot }
  /** The bucket is empty; nothing was taken. `waitUs`: until the next token. */
  | { kind: 'rate'; waitUs: number }
  /** A token was taken (every authenticated request costs one) but all slots are in use. */
  | { kind: 'concurrency' };

export type FailedAuthOutcome = { limited: false } | { limited: true; waitUs: number };

export interface LimitStore {
  /** In one atomic step: take a token of `keyId`, then a slot named `slotId`. */
  admit(keyId: string, slotId: string): Promise<AdmitOutcome>;
  /** Counts one request with a missing or invalid key from `address`. */
  failedAuth(address: string): Promise<FailedAuthOutcome>;
}

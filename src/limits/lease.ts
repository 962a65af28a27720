/**
 * A held concurrency slot for as long as its response runs: renewed every third of the lease, so a
 * year-long download keeps its slot while the slot of a replica that died expires on its own.
 */
import type { HeldSlot } from './store.js';

export class Lease {
  private timer: NodeJS.Timeout | undefined;
  private released: Promise<void> | undefined;

  constructor(
    private readonly slot: HeldSlot,
    renewEveryMs: number,
    private readonly onEnd: (lease: Lease) => void,
  ) {
    // A failed renewal is retried by the next tick; the lease covers two missed ticks.
    this.timer = setInterval(() => this.slot.renew().catch(() => {}), renewEveryMs);
    // The slot must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /** Frees the slot once, however often it is called; never rejects (a slot left behind expires). */
  release(): Promise<void> {
    if (!this.released) {
      clearInterval(this.timer);
      this.onEnd(this);
      this.released = this.slot.release().catch(() => {});
    }
    return this.released;
  }
}

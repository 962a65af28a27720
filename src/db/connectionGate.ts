/**
 * A bounded wait for a pooled database connection.
 *
 * postgres.js queues a query that finds every connection busy, and that queue has no bound: when slow
 * clients hold every connection with their streams, a new request (even a key lookup) would wait for as
 * long as those clients take to read. So every use of the pool by the API passes this gate first: a
 * counting semaphore with as many permits as the pool has connections. Holding a permit means a
 * connection is free for the work (or comes free within moments); a request that gets no permit within
 * the deadline fails with ConnectionWaitTimeout, which the API answers with 503 instead of hanging.
 *
 * Waiters are served first come, first served, so a steady stream of new requests cannot starve one
 * that has waited longest. A waiter whose signal aborts (its client went away) leaves the queue at once.
 *
 * A gate may hold a share of another's places (`within`): bulk documents pass a gate of fewer places
 * first, then the pool's, so however many bulk streams run, the rest of the pool stays free for short
 * requests (docs/decisions/0111-bulk-documents-share-of-the-pool.md).
 */

export interface GateCounts {
  /** Permits held: work that has (or is about to have) a pooled connection. */
  held: number;
  /** Requests waiting for a permit. */
  waiting: number;
}

/** A permit to use one pooled connection. `release()` gives it back; calling it again does nothing. */
export interface Permit {
  release(): void;
}

/** No connection came free within the gate's wait. */
export class ConnectionWaitTimeout extends Error {
  constructor(
    /** How long the request waited (the gate's wait), in milliseconds. */
    readonly waitedMs: number,
    /** The gate at the moment the wait ran out (for the log). */
    readonly counts: GateCounts,
  ) {
    super(`no database connection came free within ${waitedMs} ms`);
    this.name = 'ConnectionWaitTimeout';
  }
}

/** The wait was given up (the request's client went away) before a connection came free. */
export class ConnectionWaitAborted extends Error {
  constructor(
    /** How long the request had waited, in milliseconds. */
    readonly waitedMs: number,
  ) {
    super('the wait for a database connection was given up');
    this.name = 'ConnectionWaitAborted';
  }
}

export interface ConnectionGateOptions {
  /** Permits: the pool's most connections (DATABASE_POOL_MAX). */
  size: number;
  /** How long a request may wait for a permit, in milliseconds. */
  waitMs: number;
  /** Told the counts after each change (for metrics). */
  onChange?: (counts: GateCounts) => void;
  /** Told how long each wait for a permit lasted, however it ended, with the kind of request. */
  onWaited?: (kind: string, waitedMs: number) => void;
  /**
   * The gate whose places this one shares out: a permit of this gate holds one of `within` too, taken
   * after this one's, within the same deadline.
   */
  within?: ConnectionGate;
}

/** Runs `work` while holding a pooled connection: what a query site needs from the gate. */
export type WithConnection = <T>(work: () => Promise<T>, signal?: AbortSignal, kind?: string) => Promise<T>;

/** A permit that gives back what it holds on its first release only. */
function onceReleased(giveBack: () => void): Permit {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      giveBack();
    },
  };
}

interface Waiter {
  /** Hands a permit to this waiter (it has already left the queue). */
  grant(): void;
}

export class ConnectionGate {
  readonly size: number;
  readonly waitMs: number;
  private heldCount = 0;
  /** Insertion order is arrival order, and a waiter that gives up is deleted in O(1). */
  private readonly queue = new Set<Waiter>();
  private readonly onChange: ((counts: GateCounts) => void) | undefined;
  private readonly onWaited: ((kind: string, waitedMs: number) => void) | undefined;
  readonly within: ConnectionGate | undefined;

  constructor(options: ConnectionGateOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError('size must be at least 1');
    if (!(options.waitMs > 0)) throw new RangeError('waitMs must be positive');
    if (options.within && options.size > options.within.size)
      throw new RangeError('a share of a gate cannot have more places than the gate');
    this.size = options.size;
    this.waitMs = options.waitMs;
    this.onChange = options.onChange;
    this.onWaited = options.onWaited;
    this.within = options.within;
  }

  counts(): GateCounts {
    return { held: this.heldCount, waiting: this.queue.size };
  }

  /**
   * A permit (and one of `within`'s, with a share), as soon as one is free and no earlier request
   * waits for one; rejects with ConnectionWaitTimeout after `waitMs`, or ConnectionWaitAborted when
   * `signal` aborts first. `kind` names the kind of request in the report of waits.
   */
  async acquire(signal?: AbortSignal, kind = 'other'): Promise<Permit> {
    const since = performance.now();
    try {
      const permit = await this.take(signal, since);
      if (!this.within) return permit;
      try {
        const shared = await this.within.take(signal, since);
        return onceReleased(() => {
          shared.release();
          permit.release();
        });
      } catch (error) {
        permit.release();
        throw error;
      }
    } finally {
      this.onWaited?.(kind, performance.now() - since);
    }
  }

  /** A permit of this gate alone, its wait ending `waitMs` after `since`. */
  private take(signal: AbortSignal | undefined, since: number): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(new ConnectionWaitAborted(0));
    if (this.heldCount < this.size && this.queue.size === 0) {
      this.heldCount += 1;
      this.changed();
      return Promise.resolve(this.permit());
    }
    return new Promise<Permit>((resolve, reject) => {
      const leave = (error: Error) => {
        // Already granted (a release and the deadline in the same turn): the permit stands.
        if (!this.queue.delete(waiter)) return;
        settle();
        this.changed();
        reject(error);
      };
      const timer = setTimeout(
        () => leave(new ConnectionWaitTimeout(this.waitMs, this.counts())),
        Math.max(0, since + this.waitMs - performance.now()),
      );
      const onAbort = () => leave(new ConnectionWaitAborted(Math.round(performance.now() - since)));
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: () => {
          settle();
          resolve(this.permit());
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.add(waiter);
      this.changed();
    });
  }

  /** `work` with a permit held; the permit is given back however `work` ends. */
  run: WithConnection = async (work, signal, kind) => {
    const permit = await this.acquire(signal, kind);
    try {
      return await work();
    } finally {
      permit.release();
    }
  };

  private permit(): Permit {
    return onceReleased(() => this.handOn());
  }

  /** A released permit goes straight to the longest waiter, or back to the free ones. */
  private handOn(): void {
    const next = this.queue.values().next();
    if (next.done) {
      this.heldCount -= 1;
    } else {
      this.queue.delete(next.value);
      next.value.grant();
    }
    this.changed();
  }

  private changed(): void {
    this.onChange?.(this.counts());
  }
}

/**
 * Gates reported together (one per pool of the app, and the bulk share of each): `onChange` is told the
 * counts summed over every gate made so far, since what matters to an operator is whether requests wait
 * at all. A share's permits are held within its pool's, so only the pools' are counted as held.
 */
export function gateGroup(
  options: Omit<ConnectionGateOptions, 'onChange' | 'within'>,
  onChange?: (counts: GateCounts) => void,
): (share?: { of: ConnectionGate; size: number }) => ConnectionGate {
  const gates: ConnectionGate[] = [];
  const report = () =>
    onChange?.(
      gates.reduce<GateCounts>(
        (sum, gate) => {
          const counts = gate.counts();
          const held = gate.within ? 0 : counts.held;
          return { held: sum.held + held, waiting: sum.waiting + counts.waiting };
        },
        { held: 0, waiting: 0 },
      ),
    );
  return (share) => {
    const gate = new ConnectionGate({
      ...options,
      onChange: report,
      ...(share && { size: share.size, within: share.of }),
    });
    gates.push(gate);
    return gate;
  };
}

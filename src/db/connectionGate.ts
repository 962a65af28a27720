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
}

/** Runs `work` while holding a pooled connection: what a query site needs from the gate. */
export type WithConnection = <T>(work: () => Promise<T>, signal?: AbortSignal) => Promise<T>;

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

  constructor(options: ConnectionGateOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError('size must be at least 1');
    if (!(options.waitMs > 0)) throw new RangeError('waitMs must be positive');
    this.size = options.size;
    this.waitMs = options.waitMs;
    this.onChange = options.onChange;
  }

  counts(): GateCounts {
    return { held: this.heldCount, waiting: this.queue.size };
  }

  /**
   * A permit, as soon as one is free and no earlier request waits for one; rejects with
   * ConnectionWaitTimeout after `waitMs`, or ConnectionWaitAborted when `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(new ConnectionWaitAborted(0));
    if (this.heldCount < this.size && this.queue.size === 0) {
      this.heldCount += 1;
      this.changed();
      return Promise.resolve(this.permit());
    }
    return new Promise<Permit>((resolve, reject) => {
      const since = performance.now();
      const leave = (error: Error) => {
        // Already granted (a release and the deadline in the same turn): the permit stands.
        if (!this.queue.delete(waiter)) return;
        settle();
        this.changed();
        reject(error);
      };
      const timer = setTimeout(
        () => leave(new ConnectionWaitTimeout(this.waitMs, this.counts())),
        this.waitMs,
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
  run: WithConnection = async (work, signal) => {
    const permit = await this.acquire(signal);
    try {
      return await work();
    } finally {
      permit.release();
    }
  };

  private permit(): Permit {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.handOn();
      },
    };
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
 * Gates reported together (one per pool of the app): `onChange` is told the counts summed over every
 * gate made so far, since what matters to an operator is whether requests wait at all.
 */
export function gateGroup(
  options: Omit<ConnectionGateOptions, 'onChange'>,
  onChange?: (counts: GateCounts) => void,
): () => ConnectionGate {
  const gates: ConnectionGate[] = [];
  const report = () =>
    onChange?.(
      gates.reduce<GateCounts>(
        (sum, gate) => {
          const counts = gate.counts();
          return { held: sum.held + counts.held, waiting: sum.waiting + counts.waiting };
        },
        { held: 0, waiting: 0 },
      ),
    );
  return () => {
    const gate = new ConnectionGate({ ...options, onChange: report });
    gates.push(gate);
    return gate;
  };
}

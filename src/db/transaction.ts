/**
 * The one way to open a transaction: `begin` runs work in one, `iterate` hands its items to a consumer
 * that pulls them, and `{ snapshot: true }` makes either one read-only snapshot. `beginReserved` is for
 * a reserved connection (migrations hold one for their advisory lock), which postgres.js gives no
 * `begin`.
 *
 * Both handle a connection lost in the middle (a restart, a switch-over, pg_terminate_backend), which
 * postgres.js (3.4.9, issues #1154 and #1208) does not: it answers a callback that settles after its
 * connection closed with a ROLLBACK or COMMIT written to the dead socket, which throws an uncaught
 * TypeError from a timer (a crashed process, e.g. `gwapi import` during a switch-over) and leaves the
 * pooled connection silent until connect_timeout. So once the connection is gone the callback never
 * settles: postgres.js rejects `sql.begin` itself when the connection closes, and the server has rolled
 * the transaction back.
 */
import type postgres from 'postgres';
import type { TransactionSql } from 'postgres';
import type { Sql } from './connect.js';
import { isConnectionLost } from './errorCodes.js';

export interface TransactionOptions {
  /**
   * One read-only snapshot for every statement (repeatable read, read only): a document's tubes and
   * all their rows agree.
   */
  snapshot?: boolean;
  /**
   * A writer of `measurements`: no bound on the rows TimescaleDB may decompress for it. Its DML on
   * compressed chunks decompresses the batches it reaches, and TimescaleDB fails a transaction that
   * decompresses more than `timescaledb.max_tuples_decompressed_per_dml_transaction` (100,000 by
   * default), so an import or a correction that reaches many batches would fail where it succeeds on a
   * plain table. A placeholder setting where TimescaleDB is not loaded.
   */
  write?: boolean;
}

const modeOf = (options: TransactionOptions) =>
  options.snapshot ? 'isolation level repeatable read read only' : '';

/** What a transaction callback returns once its connection is gone. */
const neverSettles = () => new Promise<never>(() => {});

/** Runs `work` in a transaction: committed when it resolves, rolled back when it throws. */
export function begin<T>(
  sql: Sql,
  work: (tx: TransactionSql) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  return sql.begin(modeOf(options), async (tx) => {
    try {
      if (options.write) await tx`set local timescaledb.max_tuples_decompressed_per_dml_transaction = 0`;
      return await work(tx);
    } catch (error) {
      if (isConnectionLost(error)) return neverSettles();
      throw error;
    }
  }) as Promise<T>;
}

/** `work` in a transaction of the reserved `session`, rolled back if it fails. */
export async function beginReserved(session: postgres.ReservedSql, work: () => Promise<void>): Promise<void> {
  await session.unsafe('begin');
  try {
    await work();
  } catch (error) {
    // A lost session's transaction is rolled back already; a ROLLBACK written to it would be thrown
    // from postgres.js's timer, like begin's.
    if (!isConnectionLost(error)) await session.unsafe('rollback');
    throw error;
  }
  await session.unsafe('commit');
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A turn nobody waits for any more (the consumer stopped) may still be rejected: not an unhandled one.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * One hand-over: the producer offers an item, then waits to be told whether to go on. An item of
 * `undefined` says the transaction is over.
 */
interface Turn<T> {
  item: Deferred<{ value: T } | undefined>;
  goOn: Deferred<boolean>;
}

const turn = <T>(): Turn<T> => ({ item: deferred(), goOn: deferred<boolean>() });

/**
 * A transaction that a consumer pulls from, item by item.
 *
 * postgres.js keeps a transaction, and its connection, only for the duration of the callback of
 * `sql.begin`. Streaming wants the opposite shape: an async iterator that the HTTP response pulls from
 * when the client can take more. This bridges the two: `produce` runs inside `sql.begin`, and each
 * item it yields waits until the consumer asks for the next one. When the consumer stops early
 * (`return()`, e.g. the client went away), the producer's loop ends at its next item, the transaction
 * ends, and the connection is back in the pool by the time `return()` resolves. An error of the
 * producer (or of the database) is thrown to the consumer.
 */
export async function* iterate<T>(
  sql: Sql,
  produce: (tx: TransactionSql) => AsyncIterable<T>,
  options: TransactionOptions = {},
): AsyncGenerator<T, void, undefined> {
  let current = turn<T>();
  // `sql.begin` settles while its callback still runs only when the connection closed.
  let connectionGone = false;
  let callbackDone = false;

  const transaction = sql.begin(modeOf(options), async (tx) => {
    try {
      for await (const item of produce(tx)) {
        const offered = current;
        offered.item.resolve({ value: item });
        const goOn = await offered.goOn.promise;
        if (connectionGone) return neverSettles();
        if (!goOn) break;
      }
    } catch (error) {
      if (connectionGone || isConnectionLost(error)) return neverSettles();
      throw error;
    } finally {
      callbackDone = true;
    }
    return connectionGone ? neverSettles() : undefined;
  });
  // Registered first, so the flag is set before anyone else hears of the failure.
  transaction.then(
    () => {},
    () => {
      if (!callbackDone) connectionGone = true;
    },
  );
  // The end of the transaction is heard once, here, and passed to whichever turn is current then or
  // later. (Racing each turn against the transaction's promise instead would leave one reaction per
  // item on that promise until the transaction ends, each holding its item: a year-long series would
  // keep every batch it sent alive until its last one.)
  let over: { failed: boolean; error?: unknown } | undefined;
  const tellOver = (waiter: Turn<T>) => {
    if (over?.failed) waiter.item.reject(over.error);
    else if (over) waiter.item.resolve(undefined);
  };
  transaction.then(
    () => {
      over = { failed: false };
      tellOver(current);
    },
    (error) => {
      over = { failed: true, error };
      tellOver(current);
    },
  );

  let waiting: Turn<T> | undefined;
  try {
    while (true) {
      const offered = current;
      const next = await offered.item.promise;
      if (next === undefined) return;
      current = turn<T>();
      tellOver(current);
      waiting = offered;
      yield next.value;
      waiting = undefined;
      offered.goOn.resolve(true);
    }
  } finally {
    // Stopped while the producer waits: let it leave its loop, and wait until the transaction is
    // over so the connection is back in the pool before the consumer moves on.
    waiting?.goOn.resolve(false);
    await transaction.catch(() => {});
  }
}

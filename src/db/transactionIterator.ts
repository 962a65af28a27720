/**
 * A transaction that a consumer pulls from, item by item.
 *
 * postgres.js keeps a transaction, and its connection, only for the duration of the callback of
 * `sql.begin`, and only that callback gives the connection back safely in every case (a connection
 * the server has killed is dropped, never handed out again). Streaming wants the opposite shape: an
 * async iterator that the HTTP response pulls from when the client can take more. This bridges the
 * two: `produce` runs inside `sql.begin`, and each item it yields waits until the consumer asks for
 * the next one. When the consumer stops early (`return()`, e.g. the client went away), the producer's
 * loop ends at its next item, the transaction ends, and the connection is back in the pool by the
 * time `return()` resolves. An error of the producer (or of the database) is thrown to the consumer.
 */
import type { TransactionSql } from 'postgres';
import type { Sql } from './connect.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** One hand-over: the producer offers an item, then waits to be told whether to go on. */
interface Turn<T> {
  item: Deferred<T>;
  goOn: Deferred<boolean>;
}

const turn = <T>(): Turn<T> => ({ item: deferred<T>(), goOn: deferred<boolean>() });

export async function* iterateInTransaction<T>(
  sql: Sql,
  /** For `sql.begin`, e.g. `isolation level repeatable read read only`. */
  mode: string,
  produce: (tx: TransactionSql) => AsyncIterable<T>,
): AsyncGenerator<T, void, undefined> {
  let current = turn<T>();
  const transaction = sql.begin(mode, async (tx) => {
    for await (const item of produce(tx)) {
      const offered = current;
      offered.item.resolve(item);
      if (!(await offered.goOn.promise)) return;
    }
  });
  const ended = transaction.then(() => undefined);
  // Marks the rejection handled; it still reaches the consumer through the race below.
  ended.catch(() => {});

  let waiting: Turn<T> | undefined;
  try {
    while (true) {
      const offered = current;
      const next = await Promise.race([offered.item.promise.then((item) => ({ item })), ended]);
      if (next === undefined) return;
      current = turn<T>();
      waiting = offered;
      yield next.item;
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

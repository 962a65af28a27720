/**
 * The one retry of work that failed for a passing reason, not because of what it asked. Two policies:
 *
 * - A read whose connection was lost. When PostgreSQL ends a backend (a restart, a failover,
 *   pg_terminate_backend), postgres.js reconnects the pool's connection on its next use, and that first
 *   statement can still fail with the error of the old session. A read that has sent nothing to the
 *   client yet is safe to run again, so the client sees the answer instead of a 500.
 * - A write transaction PostgreSQL rolled back to break a deadlock or a serialization conflict with
 *   another transaction (two imports locking the same tubes in different orders): the other one goes on,
 *   and the same transaction run again meets its locks and waits its turn.
 */
import { isConnectionLost, isTransactionConflict } from './errorCodes.js';

interface RetryPolicy {
  /** Attempts in all, the first among them. */
  attempts: number;
  retries(error: unknown): boolean;
}

/**
 * Reads: only a lost connection is retried (errorCodes.ts), one retry. postgres.js fails a query on a
 * reset connection before it closes that connection, and a retry handed to it in between waits forever
 * (pools of several hosts are safe either way: src/db/targetSession.ts): so never in the turn that failed.
 */
const LOST_CONNECTION: RetryPolicy = { attempts: 2, retries: isConnectionLost };

/** Write transactions: a conflict that recurs this often is no passing one, and is reported. */
export const CONFLICT_ATTEMPTS = 3;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function retry<T>(work: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt === policy.attempts || !policy.retries(error)) throw error;
      await nextTurn();
    }
  }
}

/** Runs a read-only `work`, and again as the policy says when its connection was lost. */
export function retryIfConnectionLost<T>(work: () => Promise<T>): Promise<T> {
  return retry(work, LOST_CONNECTION);
}

/**
 * Runs `work`, a whole write transaction, and again up to CONFLICT_ATTEMPTS in all while it fails with a
 * transaction conflict and `repeatable()` (it can redo everything it did: read its input again).
 */
export function retryIfConflicted<T>(work: () => Promise<T>, repeatable: () => boolean): Promise<T> {
  return retry(work, {
    attempts: CONFLICT_ATTEMPTS,
    retries: (error) => isTransactionConflict(error) && repeatable(),
  });
}

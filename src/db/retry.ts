/**
 * One retry for reads that failed because their connection was lost, not because of what they asked.
 *
 * When PostgreSQL ends a backend (a restart, a failover, pg_terminate_backend), postgres.js reconnects
 * the pool's connection on its next use, and that first statement can still fail with the error of
 * the old session. A read that has sent nothing to the client yet is safe to run again, so the client
 * sees the answer instead of a 500.
 */
import { isConnectionLost } from './errorCodes.js';

/**
 * The policy, the same for every read: only a lost connection is retried (errorCodes.ts), one retry,
 * not in the turn that failed. postgres.js fails a query on a reset connection before it closes that
 * connection, and a retry handed to it in between waits forever (pools of several hosts are safe either
 * way: src/db/targetSession.ts).
 */
const ATTEMPTS = 2;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Runs a read-only `work`, and again as the policy says when its connection was lost. */
export async function retryIfConnectionLost<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt === ATTEMPTS || !isConnectionLost(error)) throw error;
      await nextTurn();
    }
  }
}

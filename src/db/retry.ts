/**
 * One retry for reads that failed because their connection was lost, not because of what they asked.
 *
 * When PostgreSQL ends a backend (a restart, a failover, pg_terminate_backend), postgres.js reconnects
 * the pool's connection on its next use, and that first statement can still fail with the error of
 * the old session. A read that has sent nothing to the client yet is safe to run again, so the client
 * sees the answer instead of a 500.
 */
import { isConnectionLost } from './errorCodes.js';

/** Runs a read-only `work` again, once, when its connection was lost. */
export async function retryIfConnectionLost<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isConnectionLost(error)) throw error;
    // Not in the turn that failed: postgres.js fails a query on a reset connection before it closes that
    // connection, and a retry handed to it in between waits forever (pools of several hosts are safe
    // either way: src/db/targetSession.ts).
    await new Promise((resolve) => setImmediate(resolve));
    return work();
  }
}

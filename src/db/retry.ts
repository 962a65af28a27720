/**
 * One retry for reads that failed because their connection was lost, not because of what they asked.
 *
 * When PostgreSQL ends a backend (a restart, a failover, pg_terminate_backend), postgres.js reconnects
 * the pool's connection on its next use, and that first statement can still fail with the error of
 * the old session. A read that has sent nothing to the client yet is safe to run again, so the client
 * sees the answer instead of a 500.
 */
const CONNECTION_LOST = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend, smart/fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNRESET',
  'EPIPE',
]);

export function isConnectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECTION_LOST.has(code);
}

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

/**
 * The database cannot take this query now, whatever the query: its server is unreachable, shutting
 * down or starting, read-only (a standby, or a primary just demoted), or no host of a multi-host URL
 * is the one asked for (targetSession.ts). A moment later it may well be able to: the client is told to
 * retry (503 + Retry-After) instead of being given a 500 for an operations event such as a switch-over.
 */
const UNAVAILABLE = new Set([
  ...CONNECTION_LOST,
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECT_TIMEOUT',
  'NO_SUITABLE_HOST',
  '25006', // read_only_sql_transaction: a write on a server that is (now) a standby
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // 08xxx: connection exceptions of the SQL standard.
  return typeof code === 'string' && (UNAVAILABLE.has(code) || code.startsWith('08'));
}

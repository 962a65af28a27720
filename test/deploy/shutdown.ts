/**
 * After SHUTDOWN_GRACE_SECONDS a stopping replica closes the pool (sql.end waits up to 5 s) and Redis; an
 * orchestrator's stop timeout leaves this much beyond the grace period, margin included.
 */
export const CLOSE_AFTER_GRACE_SECONDS = 10;

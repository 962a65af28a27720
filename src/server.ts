/**
 * Runs the app on a port until SIGINT/SIGTERM, then closes the server, the limits, the pool and the
 * embedded database.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Database } from './commands/database.js';
import type { Settings } from './config.js';
import type { ReplicaMonitor } from './db/readReplicas/monitor.js';
import { closeGracefully } from './http/lifecycle/shutdown.js';
import { untilStopSignal } from './http/lifecycle/stopSignal.js';
import { chooseLogFormat, createLogger, logDestination } from './http/observability/logging.js';
import { createMetrics } from './http/observability/metrics.js';
import { listenForMetrics } from './http/observability/metricsServer.js';
import { createClientLimits } from './limits/createClientLimits.js';
import { sharedLimitsConfigured } from './limits/redisConnection.js';
import { type ClientLimits, unlimited } from './limits/types.js';

export interface RunServerOptions {
  /** Called once the server listens, with its address (`http://host:port`; the real port when PORT=0). */
  onListening?: (address: string) => void;
}

/** The client limits this replica enforces, and one line at start on how they are kept. */
async function startLimits(settings: Settings, logger: FastifyBaseLogger): Promise<ClientLimits> {
  if (!settings.LIMITS_ENABLED) {
    logger.warn('LIMITS_ENABLED is false: client limits are lifted (for benchmarks only)');
    return unlimited;
  }
  if (!sharedLimitsConfigured(settings)) {
    logger.warn(
      'REDIS_URL is not set: limits are kept in this process, which is correct for one replica only',
    );
  }
  // With Redis, createClientLimits itself says so when Redis does not answer at start.
  return createClientLimits(settings, { logger });
}

/**
 * The read replicas' monitor, asked once before the first request; each change of a replica's state is
 * one log line (with the driver's words when it went down).
 */
async function startReplicaMonitor(
  settings: Settings,
  db: Database,
  logger: FastifyBaseLogger,
): Promise<ReplicaMonitor | undefined> {
  if (!db.replicas) return undefined;
  const monitor = db.replicas.monitor({
    maxLagSeconds: settings.READ_MAX_LAG_SECONDS,
    onChange(replica, from, to, reason) {
      const fields = {
        replica,
        from: from ?? 'starting',
        to,
        lagSeconds: monitor.status(replica).lagSeconds,
      };
      if (to === 'usable') logger.info(fields, 'read replica usable');
      else logger.warn({ ...fields, ...(reason && { reason }) }, `read replica ${to}: no new reads`);
    },
  });
  await monitor.start();
  return monitor;
}

export async function runServer(
  settings: Settings,
  db: Database,
  options: RunServerOptions = {},
): Promise<void> {
  // Taken over before anything else starts: a signal during start-up stops the server as soon as it
  // listens, gracefully, instead of killing it half-started or being lost.
  const stopped = untilStopSignal();
  const format = chooseLogFormat(settings.LOG_FORMAT, process.stdout.isTTY);
  const logger = createLogger(settings.LOG_LEVEL, await logDestination(format));
  const limits = await startLimits(settings, logger);
  const metrics = createMetrics({ limits, poolMax: settings.DATABASE_POOL_MAX });
  const monitor = await startReplicaMonitor(settings, db, logger);
  const replicas = db.replicas && monitor && { ...db.replicas, monitor };
  const app = buildApp({ sql: db.sql, replicas, settings, limits, logger, metrics });
  let metricsApp: FastifyInstance | undefined;
  try {
    const address = await app.listen({ host: settings.HOST, port: settings.PORT });
    const database = db.embedded ? 'embedded' : 'DATABASE_URL';
    const reads = replicas ? 'DATABASE_READ_URL' : database;
    app.log.info(
      { address, database, reads, ...(replicas && { replicas: replicas.pools.length }) },
      'gwapi listening',
    );
    metricsApp = await listenForMetrics(metrics, settings, logger);
    options.onListening?.(address);
    await stopped;
    app.log.info({ graceSeconds: settings.SHUTDOWN_GRACE_SECONDS }, 'shutting down');
    await closeGracefully(app, settings.SHUTDOWN_GRACE_SECONDS * 1000);
  } finally {
    // Metrics stay scrapable while the replica drains.
    await metricsApp?.close();
    // After the server: responses still running hold slots until they end. A replica that cannot
    // release them (killed) leaves them to expire with their leases.
    await limits.close();
    await monitor?.stop();
  }
  await db.close();
}

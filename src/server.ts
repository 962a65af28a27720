/**
 * Runs the app on a port until SIGINT/SIGTERM, then closes the server, the limits, the pool and the
 * embedded database.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Database } from './commands/database.js';
import type { Settings } from './config.js';
import { connectionTarget, explainedError } from './connectionFailure.js';
import { NoReplicaAnswers, openReads, type Reads } from './db/readReplicas/reads.js';
import { closeGracefully } from './http/lifecycle/shutdown.js';
import { untilStopSignal } from './http/lifecycle/stopSignal.js';
import { chooseLogFormat, createLogger, logDestination } from './http/observability/logging.js';
import { createMetrics, type ServiceMetrics } from './http/observability/metrics.js';
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
 * Where requests read (src/db/readReplicas/reads.ts), started: with DATABASE_READ_URL one replica at
 * least answers (none at all is most likely a wrong URL, told as for DATABASE_URL), and each change of a
 * replica's state is one log line (with the driver's words when it went down).
 */
async function startReads(
  settings: Settings,
  db: Database,
  metrics: ServiceMetrics,
  logger: FastifyBaseLogger,
): Promise<Reads> {
  const { sql: primary, readUrl, applicationName } = db;
  const reads = openReads({ settings, primary, readUrl, applicationName, metrics, logger });
  try {
    await reads.start();
  } catch (error) {
    if (!(error instanceof NoReplicaAnswers)) throw error;
    throw explainedError(error.failure, connectionTarget('DATABASE_READ_URL', 'PostgreSQL', error.hostUrl));
  }
  return reads;
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
  let reads: Reads | undefined;
  let metricsApp: FastifyInstance | undefined;
  try {
    reads = await startReads(settings, db, metrics, logger);
    const app = buildApp({ sql: db.sql, reads, settings, limits, logger, metrics });
    const address = await app.listen({ host: settings.HOST, port: settings.PORT });
    const database = db.embedded ? 'embedded' : 'DATABASE_URL';
    const replicas = reads.replicas().length;
    app.log.info(
      {
        address,
        database,
        reads: replicas ? 'DATABASE_READ_URL' : database,
        ...(replicas > 0 && { replicas }),
      },
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
    await reads?.stop();
    // On a failed start too: the command ends with its error, nothing left open.
    await db.close();
  }
}

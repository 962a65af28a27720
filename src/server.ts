/** Runs the app on a port until SIGINT/SIGTERM, then closes the server, the pool and the embedded database. */
import { buildApp } from './api/app.js';
import type { Database } from './commands/database.js';
import type { Settings } from './config.js';

export async function runServer(settings: Settings, db: Database): Promise<void> {
  const app = buildApp({ sql: db.sql, settings });
  const address = await app.listen({ host: settings.HOST, port: settings.PORT });
  app.log.info({ address, database: db.embedded ? 'embedded' : 'DATABASE_URL' }, 'gwapi listening');
  if (!settings.REDIS_URL) {
    app.log.warn(
      'REDIS_URL is not set: limits are kept in this process, which is correct for one replica only',
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  app.log.info('shutting down');
  await app.close();
  await db.close();
}

/**
 * `gwapi demo`: the service with no set-up at all. Database (embedded unless DATABASE_URL is set),
 * schema, demo network with a year of measurements (seeded once), a fresh demo key, then the server.
 */
import type { Settings } from '../config.js';
import { migrate } from '../db/migrate.js';
import { demoBanner } from '../demo/banner.js';
import { createDemoKey, seedDemo } from '../demo/seed.js';
import { runServer } from '../server.js';
import { openDatabase } from './database.js';

export async function demoCommand(settings: Settings): Promise<void> {
  const db = await openDatabase(settings, 'gwapi demo');
  let prepared: { data: Awaited<ReturnType<typeof seedDemo>>; key: string; keyId: string };
  try {
    await migrate(db.sql);
    const started = Date.now();
    process.stderr.write('gwapi demo: preparing the demo data…\n');
    const data = await seedDemo(db.sql);
    if (data.seeded)
      process.stderr.write(`gwapi demo: seeded in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    const { key, keyId } = await createDemoKey(db.sql);
    prepared = { data, key, keyId };
  } catch (error) {
    await db.close();
    throw error;
  }
  const database = db.embedded
    ? `an embedded PostgreSQL in ${settings.GWAPI_DATA_DIR}/postgres`
    : 'DATABASE_URL';
  await runServer(settings, db, {
    onListening: (address) => process.stdout.write(demoBanner({ address, database, ...prepared })),
  });
}

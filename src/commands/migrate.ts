import type { Settings } from '../config.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from './database.js';

export async function migrateCommand(settings: Settings): Promise<void> {
  const db = await openDatabase(settings, 'gwapi migrate');
  try {
    const { applied, timescaledb } = await migrate(db.sql, {
      onLockTimeout: ({ what, attempt, attempts, oldest }) =>
        process.stderr.write(
          `gwapi migrate: ${what}: gave up waiting for a lock (attempt ${attempt} of ${attempts}), ` +
            `trying again${oldest ? `; oldest transaction: ${oldest}` : ''}\n`,
        ),
    });
    const names = applied.map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`);
    process.stdout.write(
      `${applied.length === 0 ? 'schema is up to date' : `applied ${names.join(', ')}`}; ` +
        `measurements: ${timescaledb ? 'TimescaleDB hypertable' : 'plain PostgreSQL table'}\n`,
    );
  } finally {
    await db.close();
  }
}

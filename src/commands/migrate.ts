import type { Settings } from '../config.js';
import { migrate } from '../db/migrate.js';
import { historyReader } from '../db/walHistory.js';
import { openDatabase } from './database.js';

export async function migrateCommand(
  settings: Settings,
  options: { withoutTimescaledb: boolean },
): Promise<void> {
  const db = await openDatabase(settings, 'gwapi migrate');
  try {
    const { applied, timescaledb } = await migrate(db.sql, {
      withoutTimescaleDb: options.withoutTimescaledb,
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
    const reader = await historyReader(db.sql);
    if (!reader.readable)
      process.stderr.write(
        `gwapi migrate: warning: role ${reader.owner} may not read the WAL history, so every sync token ` +
          `is a 410 after a promotion or restore; as a superuser: grant pg_read_server_files, ` +
          `pg_read_all_stats to ${reader.owner} (docs/operations/replicas-and-failover.md)\n`,
      );
  } finally {
    await db.close();
  }
}

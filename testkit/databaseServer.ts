/**
 * The PostgreSQL a benchmark or drill runs against: DATABASE_URL when given, otherwise the testkit's
 * throwaway embedded cluster (testkit/postgres.ts). Each run makes databases of its own in it,
 * so two stores (say, one tube alone and the same tube among many) can be compared side by side.
 */
import { connect, type Sql } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase, postgresOrThrowaway } from './postgres.js';

export interface DatabaseServer {
  /** A new, migrated database named `name` (dropped first if a previous run left it). */
  database(name: string): Promise<{ url: string; sql: Sql }>;
  /** A new database named `name` without any schema (dropped first if it exists); its URL. */
  emptyDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** A CHECKPOINT: what earlier work left in the WAL is written out now, not during what comes next. */
  checkpoint(): Promise<void>;
  /** Where it runs, for the report. */
  description: string;
  stop(): Promise<void>;
}

/** `settings`: of the throwaway server, on top of the testkit's fast ones (an import's benchmark wants fsync). */
export async function startDatabaseServer(settings: Record<string, string> = {}): Promise<DatabaseServer> {
  const server = await postgresOrThrowaway(process.env.DATABASE_URL, settings);
  const admin = connect(server.url, { max: 1, applicationName: 'gwapi bench' });
  const [{ version }] = (await admin`select split_part(version(), ' ', 2) as version`) as [
    { version: string },
  ];
  const where = !server.throwaway
    ? 'PostgreSQL at DATABASE_URL'
    : settings.fsync === 'on'
      ? 'embedded PostgreSQL (default settings, fsync on)'
      : 'embedded PostgreSQL (default settings, fsync off)';
  const opened: Sql[] = [];
  return {
    description: `${where} ${version}`,
    async database(name) {
      const url = await createDatabase(admin, server.url, name);
      const sql = connect(url, { max: 4, applicationName: 'gwapi bench setup' });
      opened.push(sql);
      await migrate(sql);
      return { url, sql };
    },
    emptyDatabase: (name) => createDatabase(admin, server.url, name),
    async dropDatabase(name) {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
    },
    async checkpoint() {
      await admin`checkpoint`;
    },
    async stop() {
      for (const sql of opened) await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
      await server.stop();
    },
  };
}

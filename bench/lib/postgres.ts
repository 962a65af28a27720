/**
 * The PostgreSQL a benchmark runs against: DATABASE_URL when given, otherwise the testkit's throwaway
 * embedded cluster (testkit/postgres.ts). Each benchmark makes databases of its own in it,
 * so two stores (say, one tube alone and the same tube among many) can be compared side by side.
 */
import { connect, type Sql } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { createDatabase, postgresOrThrowaway } from '../../testkit/postgres.js';

export interface BenchPostgres {
  /** A new, migrated database named `name` (dropped first if a previous run left it). */
  database(name: string): Promise<{ url: string; sql: Sql }>;
  /** Where it runs, for the report. */
  description: string;
  stop(): Promise<void>;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const server = await postgresOrThrowaway(process.env.DATABASE_URL);
  const admin = connect(server.url, { max: 1, applicationName: 'gwapi bench' });
  const [{ version }] = (await admin`select split_part(version(), ' ', 2) as version`) as [
    { version: string },
  ];
  const where = server.throwaway
    ? 'embedded PostgreSQL (default settings, fsync off)'
    : 'PostgreSQL at DATABASE_URL';
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
    async stop() {
      for (const sql of opened) await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
      await server.stop();
    },
  };
}

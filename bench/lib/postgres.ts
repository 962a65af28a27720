/**
 * The PostgreSQL a benchmark runs against: DATABASE_URL when given, otherwise a throwaway embedded
 * cluster in a temporary folder (removed at the end). Each benchmark makes databases of its own in it,
 * so two stores (say, one tube alone and the same tube among many) can be compared side by side.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Sql } from '../../src/db/connect.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';

export interface BenchPostgres {
  /** A new, migrated database named `name` (dropped first if a previous run left it). */
  database(name: string): Promise<{ url: string; sql: Sql }>;
  /** Where it runs, for the report. */
  description: string;
  stop(): Promise<void>;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  let url = process.env.DATABASE_URL;
  let stopServer = async () => {};
  let description = 'PostgreSQL at DATABASE_URL';
  if (!url) {
    const dir = await mkdtemp(join(tmpdir(), 'gwapi-bench-'));
    await chmod(dir, 0o755); // as root, the server runs as `postgres` and must reach its folder
    // Durability is irrelevant for a throwaway cluster; the default memory settings are kept, so the
    // figures are those of an untuned server. Not `synchronous_commit = off`: with commits not yet
    // flushed, VACUUM cannot mark pages all-visible, and the series would lose its index-only scan.
    const server = await startEmbeddedPostgres({
      dir: join(dir, 'pg'),
      persistent: false,
      settings: { fsync: 'off', full_page_writes: 'off' },
    });
    url = server.url;
    description = 'embedded PostgreSQL (default settings, fsync off)';
    stopServer = async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const admin = connect(url, { max: 1, applicationName: 'gwapi bench' });
  const [{ version }] = (await admin`select split_part(version(), ' ', 2) as version`) as [
    { version: string },
  ];
  const opened: Sql[] = [];
  return {
    description: `${description} ${version}`,
    async database(name) {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.unsafe(`create database ${name}`);
      const target = new URL(url);
      target.pathname = `/${name}`;
      const sql = connect(target.toString(), { max: 4, applicationName: 'gwapi bench setup' });
      opened.push(sql);
      await migrate(sql);
      return { url: target.toString(), sql };
    },
    async stop() {
      for (const sql of opened) await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
      await stopServer();
    },
  };
}

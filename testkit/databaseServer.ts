/**
 * The database server a benchmark or drill runs against, on one of two engines:
 * - `postgres`: DATABASE_URL when given, otherwise the testkit's throwaway embedded cluster
 *   (testkit/postgres.ts), where TimescaleDB cannot load and `measurements` stays a plain table;
 * - `timescaledb`: the native TimescaleDB build (testkit/timescale.ts), throwaway and preloaded, where
 *   the migrations make `measurements` a compressed hypertable with its compression policy.
 * Each run makes databases of its own in it, so two stores (say, one tube alone and the same tube among
 * many) can be compared side by side.
 *
 * BENCH_ENGINE chooses the engines of a run (`benchEngines()`): `postgres` (the default), `timescaledb`,
 * or `both`, one after the other in the same run, so that a ratio between them is of one run.
 */
import { connect, type Sql } from '../src/db/connect.js';
import type { EmbeddedDatabase } from '../src/db/embedded.js';
import { createDatabase, migrateAlone, postgresOrThrowaway } from './postgres.js';
import { type Prerequisite, throwawayPostgres } from './prerequisites.js';
import { startReplicationCluster } from './replication.js';
import { nativeTimescale, startTimescale, TIMESCALE_BASE_SETTINGS } from './timescale.js';

export type Engine = 'postgres' | 'timescaledb';

/** How a report names each engine. */
export const ENGINE_NAMES: Record<Engine, string> = { postgres: 'PostgreSQL', timescaledb: 'TimescaleDB' };

const CHOICES: Record<string, Engine[]> = {
  postgres: ['postgres'],
  timescaledb: ['timescaledb'],
  both: ['postgres', 'timescaledb'],
};

/** The engines BENCH_ENGINE names, in the order they run; throws on a value it does not know. */
export function benchEngines(environment: NodeJS.ProcessEnv = process.env): Engine[] {
  const choice = environment.BENCH_ENGINE || 'postgres';
  const engines = CHOICES[choice];
  if (!engines) {
    throw new Error(`BENCH_ENGINE=${choice}: use ${Object.keys(CHOICES).join(', ')}`);
  }
  return engines;
}

/** What the engines need from the machine, for `requirePrerequisites` (testkit/prerequisites.ts). */
export function enginePrerequisites(engines: Engine[]): Prerequisite[] {
  return engines.map((engine) => (engine === 'postgres' ? throwawayPostgres : nativeTimescale));
}

export interface DatabaseServer {
  engine: Engine;
  /** A new, migrated database named `name` (dropped first if a previous run left it). */
  database(name: string): Promise<{ url: string; sql: Sql }>;
  /** A new database named `name` without any schema (dropped first if it exists); its URL. */
  emptyDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** A CHECKPOINT: what earlier work left in the WAL is written out now, not during what comes next. */
  checkpoint(): Promise<void>;
  /** Where it runs, for the report: the engine, its version, fsync. */
  description: string;
  stop(): Promise<void>;
}

/**
 * The engine's server: DATABASE_URL's or a throwaway one, and the words for the report. Beside
 * TimescaleDB (BENCH_ENGINE=both), plain PostgreSQL is Debian's PostgreSQL 15, the one TimescaleDB's build
 * copies, with the same settings but the preload: a ratio between them is the extension's alone, not a
 * major version's.
 */
async function serverOf(
  engine: Engine,
  settings: Record<string, string>,
): Promise<EmbeddedDatabase & { where: string }> {
  const fsync = settings.fsync === 'on' ? 'fsync on' : 'fsync off';
  if (engine === 'timescaledb') {
    return { ...(await startTimescale({ settings })), where: `native TimescaleDB (preloaded, ${fsync})` };
  }
  if (!process.env.DATABASE_URL && benchEngines().includes('timescaledb')) {
    const cluster = await startReplicationCluster({
      standbys: 0,
      migrated: false,
      settings: { ...TIMESCALE_BASE_SETTINGS, ...settings },
    });
    return { url: cluster.primary.url, stop: () => cluster.stop(), where: `Debian's PostgreSQL (${fsync})` };
  }
  const server = await postgresOrThrowaway(process.env.DATABASE_URL, settings);
  const where = server.throwaway
    ? `embedded PostgreSQL (default settings, ${fsync})`
    : 'PostgreSQL at DATABASE_URL';
  return { ...server, where };
}

/**
 * `settings`: of the throwaway server, on top of the testkit's fast ones (an import's benchmark wants
 * fsync). `engine`: which server (see the top of this file); DATABASE_URL replaces only `postgres`'s.
 */
export async function startDatabaseServer(
  settings: Record<string, string> = {},
  engine: Engine = 'postgres',
): Promise<DatabaseServer> {
  const server = await serverOf(engine, settings);
  const admin = connect(server.url, { max: 1, applicationName: 'gwapi bench' });
  const [{ version, timescaledb }] = (await admin`
    select split_part(version(), ' ', 2) as version,
           (select default_version from pg_available_extensions where name = 'timescaledb') as timescaledb`) as [
    { version: string; timescaledb: string | null },
  ];
  const opened: Sql[] = [];
  return {
    engine,
    description:
      engine === 'timescaledb'
        ? `${server.where} ${timescaledb} on PostgreSQL ${version}`
        : `${server.where} ${version}`,
    async database(name) {
      const url = await createDatabase(admin, server.url, name);
      await migrateAlone(url);
      const sql = connect(url, { max: 4, applicationName: 'gwapi bench setup' });
      opened.push(sql);
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

export interface CompressedHistory {
  /** The policy's `compress_after`, as PostgreSQL prints it: `180 days`. */
  compressAfter: string;
  /** Chunks of `measurements` the policy compressed (all that ended before now() − compressAfter). */
  compressed: number;
  /** Chunks it left as they are, being younger. */
  uncompressed: number;
}

/**
 * The history of `measurements` as the compression policy leaves it: the policy's own job, run now
 * (`call run_job`, as the scheduler would), then checked: every chunk that ended before now() minus its
 * `compress_after` is compressed, and no other. On plain PostgreSQL there is no policy: throws.
 */
export async function compressAsThePolicyLeavesIt(sql: Sql): Promise<CompressedHistory> {
  const [job] = await sql<{ id: number; compressAfter: string }[]>`
    select job_id as id, config->>'compress_after' as "compressAfter" from timescaledb_information.jobs
    where proc_name = 'compress_measurements'`.catch(() => []);
  if (!job) throw new Error('measurements has no compression policy: not a migrated TimescaleDB database');
  await sql`call run_job(${job.id})`;
  const chunks = await sql<{ name: string; compressed: boolean; due: boolean }[]>`
    select chunk_name as name, is_compressed as compressed,
           range_end <= now() - ${job.compressAfter}::interval as due
    from timescaledb_information.chunks where hypertable_name = 'measurements'`;
  const wrong = chunks.filter((chunk) => chunk.compressed !== chunk.due);
  if (wrong.length > 0) {
    throw new Error(
      `the compression policy left ${wrong.map((chunk) => `${chunk.name} (${chunk.compressed ? '' : 'un'}compressed)`).join(', ')}`,
    );
  }
  const compressed = chunks.filter((chunk) => chunk.compressed).length;
  return { compressAfter: job.compressAfter, compressed, uncompressed: chunks.length - compressed };
}

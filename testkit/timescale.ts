/**
 * Native TimescaleDB: Debian's PostgreSQL 15 with the extension built from its source archive by
 * `testkit/build-timescaledb.sh` into a PostgreSQL tree of its own (in a cache outside the clone), run
 * as a throwaway server with the library preloaded, as production runs it.
 *
 * Where no build is there, `timescaleMissing()` says in one line how to make one; the tests that need it
 * are then skipped with that line (test/helpers/database.ts), never passed.
 */
import { accessSync, constants } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Prerequisite } from './prerequisites.js';
import type { Owner } from './processes.js';
import {
  type PgNode,
  type ReplicationCluster,
  replicationMissing,
  startReplicationCluster,
} from './replication.js';

/**
 * Where build-timescaledb.sh keeps its newest build (GWAPI_TIMESCALEDB_CACHE moves the cache). As root,
 * a system folder: the server then runs as `postgres`, which cannot enter root's home.
 */
export const TIMESCALEDB_TREE = join(
  process.env.GWAPI_TIMESCALEDB_CACHE ??
    (userInfo().uid === 0 ? '/var/cache/gwapi-timescaledb' : join(homedir(), '.cache', 'gwapi-timescaledb')),
  'current',
);
export const TIMESCALEDB_BIN = join(TIMESCALEDB_TREE, 'usr', 'lib', 'postgresql', '15', 'bin');
const LIBRARY = join(TIMESCALEDB_TREE, 'usr', 'lib', 'postgresql', '15', 'lib', 'timescaledb.so');

const BUILD = 'bash testkit/build-timescaledb.sh timescaledb-2.x.tar.gz (its source archive)';

/** The prerequisite, for scripts that check theirs first (testkit/prerequisites.ts). */
export const nativeTimescale: Prerequisite = {
  name: 'native TimescaleDB',
  missing() {
    try {
      accessSync(join(TIMESCALEDB_BIN, 'postgres'), constants.X_OK);
      accessSync(LIBRARY, constants.R_OK);
    } catch {
      return BUILD;
    }
    return replicationMissing();
  },
};

/** Why native TimescaleDB cannot be started here, in one line; undefined when it can. */
export function timescaleMissing(): string | undefined {
  const fix = nativeTimescale.missing();
  return fix && `native TimescaleDB is not built here: ${fix}`;
}

/**
 * The settings production would give it: the library preloaded, no telemetry, background workers for
 * its policies. The rest are the testkit's fast ones.
 */
const SETTINGS: Record<string, string> = {
  shared_preload_libraries: "'timescaledb'",
  'timescaledb.telemetry_level': "'off'",
  'timescaledb.max_background_workers': '8',
  max_worker_processes: '16',
};

/** Its settings that are not TimescaleDB's: plain PostgreSQL beside it takes them (testkit/databaseServer.ts). */
export const TIMESCALE_BASE_SETTINGS: Record<string, string> = {
  max_connections: '300',
  fsync: 'off',
  full_page_writes: 'off',
};

export interface TimescaleServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication). */
  url: string;
  /** The server, to stop, restart or query it as the replication tests do. */
  node: PgNode;
  /** It and its standbys. */
  cluster: ReplicationCluster;
  stop(): Promise<void>;
}

export interface TimescaleOptions {
  /** Stops the server when the owner ends. */
  owner?: Owner;
  /** More server settings, on top of the preload and the fast ones. */
  settings?: Record<string, string>;
  /** Hot standbys streaming from it (default none). */
  standbys?: number;
}

/** A throwaway native TimescaleDB server, not migrated. Throws `timescaleMissing()` where there is none. */
export async function startTimescale(options: TimescaleOptions = {}): Promise<TimescaleServer> {
  const missing = timescaleMissing();
  if (missing) throw new Error(missing);
  const cluster = await startReplicationCluster({
    standbys: options.standbys ?? 0,
    migrated: false,
    bin: TIMESCALEDB_BIN,
    settings: { ...SETTINGS, ...TIMESCALE_BASE_SETTINGS, ...options.settings },
    ...(options.owner ? { owner: options.owner } : {}),
  });
  return { url: cluster.primary.url, node: cluster.primary, cluster, stop: () => cluster.stop() };
}

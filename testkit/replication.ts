/**
 * Streaming replication with Debian's PostgreSQL 15 (the embedded server ships no pg_basebackup): a
 * primary and its hot standbys, each a server of its own on 127.0.0.1, in one throwaway folder. The
 * tests and drills do to them what an operator or an HA manager does: pause a standby's replay, stop
 * the primary, promote a standby and point the others at it.
 *
 * PostgreSQL refuses to run as root, so when we are root every server command runs as `postgres`.
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { connect, type Sql } from '../src/db/connect.js';
import { freePort } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { missingPrerequisites, POSTGRES_15_BIN, postgres15 } from './prerequisites.js';
import type { Owner } from './processes.js';

export { POSTGRES_15_BIN };

const SERVER_USER = 'postgres';
const run = promisify(execFile);
const asRoot = userInfo().uid === 0;

/** Durability is irrelevant here; replication, hot standby and rewinding are not. */
const SETTINGS: Record<string, string> = {
  listen_addresses: "'127.0.0.1'",
  fsync: 'off',
  full_page_writes: 'on',
  wal_level: 'replica',
  max_wal_senders: '10',
  wal_keep_size: "'512MB'",
  hot_standby: 'on',
  // Long streams on a standby are not cancelled by the primary's vacuum (docs/operations/replicas-and-failover.md).
  hot_standby_feedback: 'on',
  wal_log_hints: 'on',
  max_connections: '100',
  wal_receiver_status_interval: '1s',
  logging_collector: 'off',
};

/** Why streaming replicas cannot be run here, as one line with what to install; undefined when they can. */
export function replicationMissing(): string | undefined {
  return missingPrerequisites([postgres15], 'streaming replication');
}

/** Runs `file` (a path, or a command on PATH), as `postgres` when we are root. */
export async function runAsServerUser(file: string, args: string[]): Promise<string> {
  const [program, argv] = asRoot ? ['runuser', ['-u', SERVER_USER, '--', file, ...args]] : [file, args];
  const { stdout } = await run(program, argv, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** Runs a program of the PostgreSQL 15 tree `bin`, as `postgres` when we are root. */
const pg = (program: string, args: string[], bin = POSTGRES_15_BIN) =>
  runAsServerUser(join(bin, program), args);

export interface PgNode {
  name: string;
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication). */
  url: string;
  /** Its data directory; its socket is in the folder above. */
  dir: string;
  start(): Promise<void>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl promote`: resolves once the server accepts writes. */
  promote(): Promise<void>;
  /** Streams from `primary` from now on (primary_conninfo and a reload), on its latest timeline. */
  follow(primary: PgNode): Promise<void>;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** `work` on the node's own one-connection pool, tried again while the server is away. */
  query<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
}

export interface ReplicationCluster {
  /** The primary the cluster was made with (after a promotion, no longer the primary). */
  primary: PgNode;
  standbys: PgNode[];
  nodes: PgNode[];
  /** libpq's multi-host URL naming `nodes` (all by default) with `params`. */
  url(nodes?: PgNode[], params?: Record<string, string>): string;
  /** Until `standby` (every running standby by default) has replayed the primary's current WAL position. */
  caughtUp(standby?: PgNode): Promise<void>;
  stop(): Promise<void>;
}

export interface ReplicationOptions {
  standbys: number;
  /** Stops the cluster when the owner ends. */
  owner?: Owner;
  /** Apply the service's migrations on the primary before the standbys are made (default true). */
  migrated?: boolean;
  /** More server settings, for every node. */
  settings?: Record<string, string>;
  /** The bin folder of the PostgreSQL 15 tree to run (default Debian's; testkit/timescale.ts gives its own). */
  bin?: string;
}

const conf = (settings: Record<string, string>) =>
  `${Object.entries(settings)
    .map(([name, value]) => `${name} = ${value}`)
    .join('\n')}\n`;

export async function startReplicationCluster(options: ReplicationOptions): Promise<ReplicationCluster> {
  const missing = replicationMissing();
  if (missing) throw new Error(missing);
  const folder = await serverFolder('gwapi-replication-');
  const settings = { ...SETTINGS, ...options.settings };
  const nodes: Node[] = [];
  const cluster: ReplicationCluster = {
    primary: undefined as unknown as PgNode,
    standbys: [],
    nodes,
    url(chosen = nodes, params = {}) {
      const hosts = chosen.map((node) => `127.0.0.1:${node.port}`).join(',');
      const query = new URLSearchParams(params).toString();
      return `postgres://postgres@${hosts}/postgres${query ? `?${query}` : ''}`;
    },
    async caughtUp(standby) {
      const primary = await currentPrimary(nodes);
      const [row] = await primary.query(
        (sql) => sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`,
      );
      const lsn = row!.lsn;
      const waiting = standby ? [standby] : nodes.filter((node) => node !== primary && node.running);
      for (const node of waiting) {
        await until(`${node.name} replays up to ${lsn}`, async () => {
          const [row] = await node.query(
            (sql) => sql<{ done: boolean }[]>`select pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as done`,
          );
          return row?.done === true;
        });
      }
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.close()));
      await rm(folder, { recursive: true, force: true });
    },
  };
  options.owner?.teardown(() => cluster.stop());
  try {
    const primary = await newNode('node1', folder, options.bin);
    nodes.push(primary);
    await pg(
      'initdb',
      ['-D', primary.dir, '-U', SERVER_USER, '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C'],
      options.bin,
    );
    await writeServerFile(
      join(primary.dir, 'postgresql.auto.conf'),
      conf({ ...settings, port: String(primary.port) }),
    );
    await writeServerFile(
      join(primary.dir, 'pg_hba.conf'),
      'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
    );
    await primary.start();
    if (options.migrated ?? true) await primary.query((sql) => migrate(sql));
    cluster.primary = primary;
    for (let i = 0; i < options.standbys; i++) {
      const standby = await newNode(`node${i + 2}`, folder, options.bin);
      await pg(
        'pg_basebackup',
        [
          '-h',
          '127.0.0.1',
          '-p',
          String(primary.port),
          '-U',
          SERVER_USER,
          '-D',
          standby.dir,
          '-R',
          '-X',
          'stream',
          '-c',
          'fast',
          '--no-sync',
        ],
        options.bin,
      );
      // -R wrote primary_conninfo there; the port is the standby's own.
      await appendAuto(standby, { port: String(standby.port), recovery_target_timeline: "'latest'" });
      await standby.start();
      nodes.push(standby);
      cluster.standbys.push(standby);
    }
    await cluster.caughtUp();
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** A throwaway folder the server's user may write in (a server's sockets, data directories, a repository). */
export async function serverFolder(prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  if (asRoot) await run('chown', [SERVER_USER, folder]);
  return folder;
}

/** A server of this module's: PgNode with what its owner needs to stop it. */
export interface Node extends PgNode {
  running: boolean;
  close(): Promise<void>;
}

let ids: Promise<[number, number]> | undefined;
function serverIds(): Promise<[number, number]> {
  ids ??= Promise.all([run('id', ['-u', SERVER_USER]), run('id', ['-g', SERVER_USER])]).then(([u, g]) => [
    Number(u.stdout),
    Number(g.stdout),
  ]);
  return ids;
}

/** Writes a file of a server's data folder, owned by the server's user (ALTER SYSTEM rewrites it). */
export async function writeServerFile(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  if (asRoot) await chown(path, ...(await serverIds()));
}

/** Adds `settings` to the end of the server's postgresql.auto.conf (later lines win). */
export async function appendAuto(node: PgNode, settings: Record<string, string>): Promise<void> {
  const file = join(node.dir, 'postgresql.auto.conf');
  await writeServerFile(file, (await readFile(file, 'utf8')) + conf(settings));
}

/**
 * A server whose data directory is `folder`/`name` (made by the caller: initdb, pg_basebackup, a
 * restore), on a free port it must be given (appendAuto) before it is started.
 */
export async function newNode(name: string, folder: string, bin = POSTGRES_15_BIN): Promise<Node> {
  const port = await freePort();
  const dir = join(folder, name);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let admin: Sql | undefined;
  const pool = () => {
    admin ??= connect(url, { max: 1, applicationName: `testkit ${name}` });
    return admin;
  };
  const ctl = (args: string[]) => pg('pg_ctl', ['-D', dir, ...args], bin);
  const node: Node = {
    name,
    port,
    url,
    dir,
    running: false,
    async start() {
      await ctl(['-w', '-t', '60', '-l', join(folder, `${name}.log`), '-o', `-k ${folder}`, 'start']);
      node.running = true;
    },
    async stop(mode = 'fast') {
      node.running = false;
      await ctl(['-w', '-t', '60', '-m', mode, 'stop']);
    },
    async promote() {
      await ctl(['-w', '-t', '60', 'promote']);
    },
    async follow(primary) {
      await node.query(async (sql) => {
        await sql.unsafe(
          `alter system set primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=${SERVER_USER} application_name=${name}'`,
        );
        await sql`select pg_reload_conf()`;
      });
    },
    pauseReplay: () => node.query((sql) => sql`select pg_wal_replay_pause()`).then(() => undefined),
    resumeReplay: () => node.query((sql) => sql`select pg_wal_replay_resume()`).then(() => undefined),
    async query(work) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await work(pool());
        } catch (error) {
          if (attempt >= 100) throw error;
          await sleep(100);
        }
      }
    },
    async close() {
      await admin?.end({ timeout: 0 });
      admin = undefined;
      if (node.running) await node.stop('immediate').catch(() => undefined);
    },
  };
  return node;
}

async function currentPrimary(nodes: Node[]): Promise<Node> {
  for (const node of nodes.filter((n) => n.running)) {
    const [row] = await node.query(
      (sql) => sql<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`,
    );
    if (row && !row.standby) return node;
  }
  throw new Error('no running node is a primary');
}

async function until(what: string, done: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

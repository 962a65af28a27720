/**
 * A Patroni cluster on loopback: one etcd, and PostgreSQL 15 nodes each run by Patroni from
 * deploy/patroni/patroni.yml unchanged, with the node's own names, addresses and the passwords given
 * in PATRONI_* variables, as a production node gets them. Patroni, not the test, decides who leads;
 * the test asks for a switch-over through Patroni's REST API, as an operator's `patronictl` does.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from '../src/db/connect.js';
import { freePort } from '../src/db/embedded.js';
import { childPids, type Owner, stopProcess, untilReady } from './processes.js';

export const PATRONI_CONFIG = fileURLToPath(new URL('../deploy/patroni/patroni.yml', import.meta.url));
const run = promisify(execFile);

/** The settings patroni.yml bootstraps the cluster's DCS with, which a new cluster runs by. */
export function bootstrapSettings(): {
  ttl: number;
  loopWait: number;
  retryTimeout: number;
  synchronousMode: boolean;
} {
  const text = readFileSync(PATRONI_CONFIG, 'utf8');
  const setting = (name: string) => {
    const found = new RegExp(`^ {4}${name}: (\\S+)`, 'm').exec(text);
    if (!found) throw new Error(`${PATRONI_CONFIG} sets no ${name}`);
    return found[1]!;
  };
  return {
    ttl: Number(setting('ttl')),
    loopWait: Number(setting('loop_wait')),
    retryTimeout: Number(setting('retry_timeout')),
    synchronousMode: setting('synchronous_mode') === 'true',
  };
}
const asRoot = userInfo().uid === 0;

export interface PatroniMember {
  name: string;
  role: 'leader' | 'replica' | 'sync_standby' | 'standby_leader';
  state: string;
  port: number;
  lag?: number | 'unknown';
  timeline?: number;
}

export interface PatroniCluster {
  /** The superuser's URL naming every node (or those `named`), in libpq's multi-host form, with `params`. */
  url(params?: Record<string, string>, named?: string[]): string;
  /** The nodes' names, in the order the URL names them. */
  names: string[];
  /** The cluster as Patroni's REST API tells it. */
  members(): Promise<PatroniMember[]>;
  /**
   * Until Patroni reports one leader and every other node a running replica on the leader's timeline,
   * and the leader streams to each of them (Patroni says "running" before a replica's slot exists), and
   * in synchronous mode one of them is the synchronous standby.
   */
  healthy(timeoutMs?: number): Promise<PatroniMember[]>;
  /**
   * Asks Patroni to hand the leader role to `candidate` (POST /switchover); resolves when accepted. In
   * synchronous mode only the synchronous standby is a candidate.
   */
  switchover(candidate: string): Promise<void>;
  /**
   * Changes the cluster's settings in the DCS (PATCH /config, as `patronictl edit-config` does), e.g.
   * `{ ttl: 10, loop_wait: 2 }` or `{ synchronous_mode: true }`; resolves once the DCS holds them.
   */
  configure(settings: Record<string, unknown>): Promise<void>;
  /**
   * A crash of `name`'s node as the database tier sees it: SIGKILL to its Patroni, its postmaster and
   * every process of that server, all at once. Nothing of the node speaks again: the leader key it
   * held stays in etcd until its ttl runs out. Resolves with the processes killed.
   */
  crash(name: string): Promise<number[]>;
  /**
   * Holds the WAL senders of `name`'s server (SIGSTOP): its standbys receive nothing more, as standbys
   * fallen behind do, and still serve reads. Resolves with what lets them go on (SIGCONT).
   */
  holdWalSenders(name: string): Promise<() => void>;
  stop(): Promise<void>;
}

export async function startPatroniCluster(options: {
  nodes: number;
  owner?: Owner;
  /** More environment for a node's Patroni (and so its PostgreSQL, archive_command included). */
  env?: (node: { name: string; port: number; dataDir: string }) => Record<string, string>;
}): Promise<PatroniCluster> {
  const folder = await mkdtemp(join(tmpdir(), 'gwapi-patroni-'));
  if (asRoot) await run('chown', ['postgres', folder]);
  const children: ChildProcess[] = [];
  const superuserPassword = randomBytes(12).toString('hex');
  const etcdPort = await freePort();
  const peerPort = await freePort();
  const nodes: { name: string; port: number; restPort: number }[] = [];
  const stop = async () => {
    // Patroni first, so that no node is left without its DCS and demotes itself mid-stop.
    await Promise.all(children.slice(1).map((child) => stopProcess(child)));
    if (children[0]) await stopProcess(children[0]);
    await rm(folder, { recursive: true, force: true });
  };
  options.owner?.teardown(stop);

  const etcd = spawn(
    'etcd',
    [
      '--name',
      'etcd1',
      '--data-dir',
      join(folder, 'etcd'),
      '--listen-client-urls',
      `http://127.0.0.1:${etcdPort}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${etcdPort}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-cluster',
      `etcd1=http://127.0.0.1:${peerPort}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(etcd);
  await untilReady(etcd, (line) => (line.includes('ready to serve client requests') ? true : undefined), {
    what: 'etcd',
    timeoutMs: 30_000,
    streams: ['stdout', 'stderr'],
  });

  for (let i = 1; i <= options.nodes; i++) {
    const node = { name: `node${i}`, port: await freePort(), restPort: await freePort() };
    nodes.push(node);
    const env = {
      PATH: process.env.PATH,
      PATRONI_NAME: node.name,
      PATRONI_RESTAPI_LISTEN: `127.0.0.1:${node.restPort}`,
      PATRONI_RESTAPI_CONNECT_ADDRESS: `127.0.0.1:${node.restPort}`,
      PATRONI_POSTGRESQL_LISTEN: `127.0.0.1:${node.port}`,
      PATRONI_POSTGRESQL_CONNECT_ADDRESS: `127.0.0.1:${node.port}`,
      PATRONI_POSTGRESQL_DATA_DIR: join(folder, node.name),
      PATRONI_ETCD3_HOSTS: `127.0.0.1:${etcdPort}`,
      PATRONI_SUPERUSER_PASSWORD: superuserPassword,
      PATRONI_REPLICATION_PASSWORD: randomBytes(12).toString('hex'),
      // Unix sockets next to the data, not in /var/run/postgresql, which a test machine may lack.
      PATRONI_POSTGRESQL_PGPASS: join(folder, `${node.name}.pgpass`),
      ...options.env?.({ name: node.name, port: node.port, dataDir: join(folder, node.name) }),
    };
    // --preserve-environment: the variables (passwords among them) reach Patroni, not its command line.
    const [file, args] = asRoot
      ? ['runuser', ['--preserve-environment', '-u', 'postgres', '--', 'patroni', PATRONI_CONFIG]]
      : ['patroni', [PATRONI_CONFIG]];
    // Patroni's and PostgreSQL's lines go to a file: read by nobody, a pipe would fill and stall Patroni.
    const log = openSync(join(folder, `${node.name}.log`), 'a');
    children.push(spawn(file, args, { stdio: ['ignore', log, log], env, cwd: folder }));
    closeSync(log);
    // The first node bootstraps the cluster before the others clone it.
    if (i === 1) await untilLeader(nodes, 60_000);
  }

  const members = async (): Promise<PatroniMember[]> => {
    for (const node of nodes) {
      try {
        const response = await fetch(`http://127.0.0.1:${node.restPort}/cluster`);
        if (!response.ok) continue;
        const { members } = (await response.json()) as { members: PatroniMember[] };
        return members;
      } catch {}
    }
    return [];
  };

  const postmasterOf = async (name: string) =>
    Number((await readFile(join(folder, name, 'postmaster.pid'), 'utf8')).split('\n')[0]);

  const streamingTo = async (leader: PatroniMember): Promise<number> => {
    const sql = connect(`postgres://postgres:${superuserPassword}@127.0.0.1:${leader.port}/postgres`, {
      max: 1,
    });
    try {
      const [row] = await sql<{ count: number }[]>`
        select count(*)::int as count from pg_stat_replication where state = 'streaming'`;
      return row?.count ?? 0;
    } catch {
      return 0;
    } finally {
      await sql.end({ timeout: 0 });
    }
  };

  // In synchronous mode Patroni names a synchronous standby a round after the replicas run, and hands
  // the leader role over only to it.
  const synchronousStandbyChosen = async (now: PatroniMember[]) => {
    const config = (await (await untilAnswered(nodes, '/config', {})).json()) as {
      synchronous_mode?: boolean;
    };
    return !config.synchronous_mode || now.some((member) => member.role === 'sync_standby');
  };

  const cluster: PatroniCluster = {
    names: nodes.map((node) => node.name),
    url(params = {}, named = nodes.map((node) => node.name)) {
      const hosts = nodes
        .filter((node) => named.includes(node.name))
        .map((node) => `127.0.0.1:${node.port}`)
        .join(',');
      const query = new URLSearchParams(params).toString();
      return `postgres://postgres:${superuserPassword}@${hosts}/postgres${query ? `?${query}` : ''}`;
    },
    members,
    async healthy(timeoutMs = 60_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const now = await members();
        const leader = now.find((member) => member.role === 'leader' && member.state === 'running');
        const replicas = now.filter((member) => member.role !== 'leader');
        if (
          leader &&
          now.length === nodes.length &&
          replicas.every(
            (member) =>
              ['running', 'streaming'].includes(member.state) && member.timeline === leader.timeline,
          ) &&
          (await streamingTo(leader)) === replicas.length &&
          (await synchronousStandbyChosen(now))
        ) {
          return now;
        }
        if (performance.now() > deadline)
          throw new Error(`Patroni cluster not healthy: ${JSON.stringify(now)}`);
        await sleep(250);
      }
    },
    async switchover(candidate) {
      const leader = (await members()).find((member) => member.role === 'leader');
      if (!leader) throw new Error('no leader to switch over from');
      const rest = nodes.find((node) => node.name === leader.name)!.restPort;
      const response = await fetch(`http://127.0.0.1:${rest}/switchover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader: leader.name, candidate }),
      });
      if (!response.ok) throw new Error(`switchover refused: ${response.status} ${await response.text()}`);
    },
    async configure(settings) {
      const response = await untilAnswered(nodes, '/config', {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(settings),
      });
      if (!response.ok) throw new Error(`configuration refused: ${response.status} ${await response.text()}`);
    },
    async crash(name) {
      const index = nodes.findIndex((node) => node.name === name);
      if (index === -1) throw new Error(`no node ${name}`);
      const launched = children[index + 1]!.pid!;
      // As root, runuser runs Patroni as its child; otherwise the launched process is Patroni.
      const patroniPids = asRoot ? childPids(launched) : [launched];
      const postmaster = await postmasterOf(name);
      const victims = [...patroniPids, postmaster, ...childPids(postmaster)];
      for (const pid of victims) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      return victims;
    },
    async holdWalSenders(name) {
      const senders = childPids(await postmasterOf(name)).filter((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('walsender'),
      );
      if (senders.length === 0) throw new Error(`${name} has no WAL sender`);
      for (const pid of senders) process.kill(pid, 'SIGSTOP');
      return () => {
        for (const pid of senders) {
          try {
            process.kill(pid, 'SIGCONT');
          } catch {}
        }
      };
    },
    stop,
  };
  try {
    await cluster.healthy(120_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return cluster;
}

/** The first node whose REST API answers `path`. */
async function untilAnswered(
  nodes: { restPort: number }[],
  path: string,
  init: RequestInit,
): Promise<Response> {
  let last: unknown;
  for (const node of nodes) {
    try {
      return await fetch(`http://127.0.0.1:${node.restPort}${path}`, init);
    } catch (error) {
      last = error;
    }
  }
  throw new Error(`no Patroni node answered ${path}: ${(last as Error)?.message}`);
}

async function untilLeader(nodes: { restPort: number }[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    // /primary answers 200 on the leader only.
    const answers = await Promise.all(
      nodes.map((node) =>
        fetch(`http://127.0.0.1:${node.restPort}/primary`).then(
          (response) => response.status,
          () => 0,
        ),
      ),
    );
    if (answers.includes(200)) return;
    if (performance.now() > deadline) throw new Error(`no Patroni leader within ${timeoutMs} ms`);
    await sleep(250);
  }
}

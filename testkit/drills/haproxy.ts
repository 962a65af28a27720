/**
 * Debian's HAProxy running deploy/haproxy.cfg on loopback. The project's file is written for Docker
 * (its DNS finds the replicas); here only its addressing changes: the binds move to free loopback
 * ports, the resolvers go, and the server template becomes one line per local replica. Every other
 * line (balance, checks, retries, timeouts) is the file's own, so a change there reaches the drill.
 * An admin socket is added for the drill to read servers' states and to take them in and out.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Owner, stopProcess } from '../processes.js';

export const HAPROXY_CONFIG = fileURLToPath(new URL('../../deploy/haproxy.cfg', import.meta.url));
export const BACKEND = 'api';

export interface LocalAddresses {
  /** The API frontend. */
  port: number;
  /** The monitor frontend (health and HAProxy's own metrics). */
  monitorPort: number;
  /** The admin socket (`stats socket`), on 127.0.0.1. */
  adminPort: number;
  /** Replica name → port on 127.0.0.1. */
  servers: { name: string; port: number }[];
}

const DOCKER_ONLY = [' resolvers docker', ' resolve-prefer ipv4', ' init-addr last,libc,none'];

/** deploy/haproxy.cfg with its Docker addressing replaced by `addresses`. */
export function localConfig(source: string, addresses: LocalAddresses): string {
  const out: string[] = [];
  let inResolvers = false;
  for (const line of source.split('\n')) {
    if (/^resolvers /.test(line)) inResolvers = true;
    else if (inResolvers && /^\S/.test(line)) inResolvers = false;
    if (inResolvers) continue;
    if (line === 'global') {
      out.push(line, `  stats socket ipv4@127.0.0.1:${addresses.adminPort} level admin`);
    } else if (line.trim() === 'bind :8080') {
      out.push(`  bind 127.0.0.1:${addresses.port}`);
    } else if (line.trim() === 'bind :8404') {
      out.push(`  bind 127.0.0.1:${addresses.monitorPort}`);
    } else if (/^\s*server-template /.test(line)) {
      for (const { name, port } of addresses.servers) out.push(`  server ${name} 127.0.0.1:${port}`);
    } else if (/^\s*default-server /.test(line)) {
      out.push(DOCKER_ONLY.reduce((kept, part) => kept.replace(part, ''), line));
    } else {
      out.push(line);
    }
  }
  return out.join('\n');
}

/** Counters of `show stat` the drill reads: connection and response errors, requests redispatched. */
export const SERVER_COUNTERS = ['econ', 'eresp', 'wredis'] as const;
export type ServerCounter = (typeof SERVER_COUNTERS)[number];

/** A server's line of `show stat`: its state as HAProxy sees it. */
export interface ServerState {
  name: string;
  /** UP, DOWN, MAINT, "UP 1/2" (going down), "DOWN 1/2" (coming up), … */
  status: string;
  counters: Record<ServerCounter, number>;
}

export interface Haproxy {
  base: string;
  servers(): Promise<ServerState[]>;
  /** Takes `name` out of rotation (`maint`) or puts it back (`ready`). */
  setState(name: string, state: 'maint' | 'ready'): Promise<void>;
  stop(): Promise<void>;
}

export async function startHaproxy(
  folder: string,
  addresses: LocalAddresses,
  owner?: Owner,
): Promise<Haproxy> {
  const config = join(folder, 'haproxy.cfg');
  await writeFile(config, localConfig(await readFile(HAPROXY_CONFIG, 'utf8'), addresses));
  // -db: in the foreground, not a daemon, so it ends with its parent's stop.
  const child = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = () => stopProcess(child, 'SIGTERM');
  owner?.teardown(stop);
  const admin = (command: string) => adminCommand(addresses.adminPort, command);
  const deadline = performance.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode}: ${stderr}`);
    try {
      await admin('show info');
      break;
    } catch (error) {
      if (performance.now() > deadline) throw new Error(`haproxy did not start: ${stderr}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    base: `http://127.0.0.1:${addresses.port}`,
    async servers() {
      const csv = await admin('show stat');
      const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
      const columns = header!.split(',');
      const cell = (cells: string[], column: string) => cells[columns.indexOf(column)] ?? '';
      return rows
        .map((row) => row.split(','))
        .filter(
          (cells) =>
            cell(cells, 'pxname') === BACKEND && !['BACKEND', 'FRONTEND'].includes(cell(cells, 'svname')),
        )
        .map((cells) => ({
          name: cell(cells, 'svname'),
          status: cell(cells, 'status'),
          counters: Object.fromEntries(
            SERVER_COUNTERS.map((c) => [c, Number(cell(cells, c) || 0)]),
          ) as Record<ServerCounter, number>,
        }));
    },
    async setState(name, state) {
      await admin(`set server ${BACKEND}/${name} state ${state}`);
    },
    stop,
  };
}

function adminCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = connect(port, '127.0.0.1', () => connection.end(`${command}\n`));
    let answer = '';
    connection.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    connection.on('end', () => resolve(answer));
    connection.on('error', reject);
  });
}

/**
 * The drills' API tier: a few `gwapi serve` replicas on free loopback ports behind Debian's HAProxy
 * running deploy/haproxy.cfg (haproxy.ts), as the rolling drill and the switch-over drill run it.
 * Limits are kept in Redis with production concurrency; rates are lifted, since the drills' loads
 * are not what is limited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../src/db/embedded.js';
import { type Replica, type ReplicaOptions, spawnReplica } from '../gwapi.js';
import type { Owner } from '../processes.js';
import { type Haproxy, startHaproxy } from './haproxy.js';

export interface ApiFleetOptions {
  replicas: number;
  databaseUrl: string;
  /** DATABASE_READ_URL, when reads go to standbys. */
  databaseReadUrl?: string;
  redisUrl: string;
  /** For HAProxy's configuration and admin socket. */
  folder: string;
  /** More settings of every replica. */
  env?: Record<string, string>;
  /** Another checkout to serve (the previous release: testkit/previousRelease.ts). */
  root?: string;
  owner?: Owner;
  /** Sees each replica's process as it is spawned (the test suite scans their output for keys). */
  watch?: ReplicaOptions['watch'];
}

export interface ApiFleet {
  /** api1, api2, … as HAProxy names them. */
  names: string[];
  ports: number[];
  replicas: Replica[];
  haproxy: Haproxy;
  /** Starts replica `index` again (after it was stopped) on its port. */
  restart(index: number): Promise<Replica>;
  /** Waits until HAProxy shows each of `names` with `status`. */
  untilStatus(names: string[], status: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Polling HAProxy's view. */
const POLL_MS = 50;

export async function startApiFleet(options: ApiFleetOptions): Promise<ApiFleet> {
  const names = Array.from({ length: options.replicas }, (_, i) => `api${i + 1}`);
  const ports = await Promise.all(names.map(() => freePort()));
  const env = (port: number) => ({
    DATABASE_URL: options.databaseUrl,
    DATABASE_READ_URL: options.databaseReadUrl,
    REDIS_URL: options.redisUrl,
    PORT: String(port),
    TRUST_PROXY: '1',
    LOG_LEVEL: 'info',
    // Rates are not what is drilled: the loads stay clear of 429 by rate. Concurrency and its lease
    // are the production defaults.
    RATE_LIMIT_BURST: '100000',
    RATE_LIMIT_PER_SECOND: '100000',
    ...options.env,
  });
  const start = (i: number) =>
    spawnReplica(env(ports[i]!), {
      owner: options.owner,
      watch: options.watch,
      keepLogs: false,
      root: options.root,
    });
  const replicas: Replica[] = await Promise.all(names.map((_, i) => start(i)));
  const haproxy = await startHaproxy(
    options.folder,
    {
      port: await freePort(),
      monitorPort: await freePort(),
      adminPort: await freePort(),
      servers: names.map((name, i) => ({ name, port: ports[i]! })),
    },
    options.owner,
  );
  const fleet: ApiFleet = {
    names,
    ports,
    replicas,
    haproxy,
    async restart(index) {
      replicas[index] = await start(index);
      return replicas[index];
    },
    async untilStatus(wanted, status, timeoutMs = 60_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const servers = await haproxy.servers();
        if (wanted.every((name) => servers.find((s) => s.name === name)?.status === status)) return;
        if (performance.now() > deadline) {
          throw new Error(`HAProxy did not show ${wanted.join(', ')} ${status}: ${JSON.stringify(servers)}`);
        }
        await sleep(POLL_MS);
      }
    },
    async stop() {
      await haproxy.stop();
      await Promise.all(replicas.map((replica) => replica.stop('SIGTERM')));
    },
  };
  try {
    await fleet.untilStatus(names, 'UP');
  } catch (error) {
    await fleet.stop();
    throw error;
  }
  return fleet;
}

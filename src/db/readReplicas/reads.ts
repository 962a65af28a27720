/**
 * Where requests read, wired in this one place: DATABASE_URL's pool alone, or with DATABASE_READ_URL
 * one pool per replica host (so the router chooses the replica per read, where libpq would choose once
 * per connection), the monitor that watches them (monitor.ts) and the router (readSources.ts). Every
 * pool has its connection gate, and the gates are reported together.
 *
 * libpq's parameters of DATABASE_READ_URL keep their meanings: `target_session_attrs` says which kind of
 * node may serve (the monitor asks each), and `load_balance_hosts` whether reads spread over the usable
 * ones (`random`, our default: several replicas are named to share the reads) or go to the first usable
 * in the URL's order (`disable`, libpq's default: the others wait as spares).
 */
import { bulkConnections } from '../../config.js';
import { connect, type Sql } from '../connect.js';
import { type ConnectionGateOptions, type GateCounts, gateGroup } from '../connectionGate.js';
import { hostLabel, hostUrl, parsePostgresUrl } from '../postgresUrl.js';
import { ReplicaMonitor, type ReplicaState } from './monitor.js';
import {
  primaryReads,
  type ReadFallback,
  type ReadSource,
  type ReadSources,
  type ReadsUnavailable,
  replicaReads,
} from './readSources.js';

/** The settings read here, by config.ts's names. */
export interface ReadSettings {
  /** The primary, whose WAL the monitor samples (required with DATABASE_READ_URL). */
  DATABASE_URL?: string | undefined;
  DATABASE_POOL_MAX: number;
  BULK_CONNECTIONS?: number | undefined;
  DATABASE_WAIT_SECONDS: number;
  DATABASE_PREPARE: boolean;
  READ_FALLBACK: ReadFallback;
  READ_MAX_LAG_SECONDS: number;
}

/** What is counted of the reads (the service's metrics). */
export interface ReadMetrics {
  connectionGate(counts: GateCounts): void;
  /** A request waited `waitedMs` at a connection gate (however the wait ended). */
  connectionWaited(kind: string, waitedMs: number): void;
  readServed(source: ReadSource): void;
  readsUnavailable(error: ReadsUnavailable): void;
  watchReplicas(sources: Pick<ReadSources, 'replicas'>): void;
}

/** Where each change of a replica's state is told. */
export interface ReadsLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface OpenReadsOptions {
  settings: ReadSettings;
  /** DATABASE_URL's pool: key lookups, and every read without replicas (or in READ_FALLBACK's case). */
  primary: Sql;
  /** DATABASE_READ_URL (`gwapi serve` only): undefined reads on `primary` alone. */
  readUrl?: string | undefined;
  /** The pools' application_name, ` (reads)` and ` (replica monitor)` added for the replicas'. */
  applicationName?: string;
  metrics?: ReadMetrics;
  logger?: ReadsLogger;
}

export interface Reads extends ReadSources {
  /** DATABASE_URL's source: key lookups pass its gate too. */
  readonly primary: ReadSource;
  /**
   * With replicas: one at least must answer (none at all is most likely a wrong URL: NoReplicaAnswers),
   * then the monitor looks once, so the first reads already know each replica, and then each second.
   */
  start(): Promise<void>;
  /** Stops the monitor and ends the replicas' pools (DATABASE_URL's is the caller's). */
  stop(): Promise<void>;
}

/** No replica of DATABASE_READ_URL answered at start. */
export class NoReplicaAnswers extends Error {
  constructor(
    /** The first host's URL alone, to name where it failed. */
    readonly hostUrl: string,
    /** The first host's failure. */
    readonly failure: unknown,
  ) {
    super('no replica of DATABASE_READ_URL answers', { cause: failure });
    this.name = 'NoReplicaAnswers';
  }
}

export function openReads(options: OpenReadsOptions): Reads {
  const { settings, metrics, readUrl } = options;
  const gateOptions: ConnectionGateOptions = {
    size: settings.DATABASE_POOL_MAX,
    waitMs: settings.DATABASE_WAIT_SECONDS * 1000,
    ...(metrics && { onWaited: metrics.connectionWaited }),
  };
  const newGate = gateGroup(gateOptions, metrics?.connectionGate);
  const bulkSize = bulkConnections(settings);
  /** A pool's gate and its bulk share. */
  const gates = () => {
    const gate = newGate();
    return { gate, bulkGate: newGate({ of: gate, size: bulkSize }) };
  };
  const primary: ReadSource = {
    name: 'primary',
    sql: options.primary,
    ...gates(),
    replica: false,
    heldThroughMs: () => Number.POSITIVE_INFINITY,
  };
  if (!readUrl) {
    const reads = primaryReads(primary, metrics?.readServed);
    metrics?.watchReplicas(reads);
    return { ...reads, primary, start: async () => {}, stop: async () => {} };
  }

  if (!settings.DATABASE_URL) throw new TypeError('DATABASE_READ_URL needs DATABASE_URL');
  const parsed = parsePostgresUrl(readUrl);
  const name = options.applicationName ?? 'gwapi';
  const pool = { max: settings.DATABASE_POOL_MAX, prepare: settings.DATABASE_PREPARE };
  const pools = parsed.hosts.map((host, index) => ({
    name: hostLabel(host),
    sql: connect(hostUrl(readUrl, index), { ...pool, applicationName: `${name} (reads)` }),
  }));
  // Each replica and the primary are asked on a connection of their own (monitor.ts says why).
  const probeOf = (url: string) => connect(url, { max: 1, applicationName: `${name} (replica monitor)` });
  const primaryProbe = probeOf(settings.DATABASE_URL);
  const probes = pools.map((_, index) => probeOf(hostUrl(readUrl, index)));
  const logger = options.logger;
  const monitor: ReplicaMonitor = new ReplicaMonitor({
    maxLagSeconds: settings.READ_MAX_LAG_SECONDS,
    sessionAttrs: parsed.targetSessionAttrs ?? 'any',
    primary: primaryProbe,
    replicas: pools.map(({ name }, index) => ({ name, probe: probes[index]! })),
    onChange(replica: string, from: ReplicaState | undefined, to: ReplicaState, reason?: string) {
      const fields = {
        replica,
        from: from ?? 'starting',
        to,
        lagSeconds: monitor.status(replica).lagSeconds,
      };
      if (to === 'usable') logger?.info(fields, 'read replica usable');
      else logger?.warn({ ...fields, ...(reason && { reason }) }, `read replica ${to}: no new reads`);
    },
  });
  const reads = replicaReads({
    replicas: pools.map(({ name, sql }) => ({
      name,
      sql,
      ...gates(),
      replica: true,
      heldThroughMs: () => monitor.status(name).heldThroughMs,
    })),
    primary,
    monitor,
    fallback: settings.READ_FALLBACK,
    loadBalance: parsed.loadBalanceHosts ?? 'random',
    onRead: metrics?.readServed,
    onUnavailable: metrics?.readsUnavailable,
  });
  metrics?.watchReplicas(reads);
  const endPools = () =>
    Promise.all(
      [...pools.map(({ sql }) => sql), primaryProbe, ...probes].map((sql) => sql.end({ timeout: 5 })),
    );

  return {
    ...reads,
    primary,
    async start() {
      const answers = await Promise.allSettled(pools.map(({ sql }) => sql`select 1`));
      if (!answers.some((answer) => answer.status === 'fulfilled')) {
        await endPools();
        throw new NoReplicaAnswers(hostUrl(readUrl, 0), (answers[0] as PromiseRejectedResult).reason);
      }
      await monitor.start();
    },
    async stop() {
      await monitor.stop();
      await endPools();
    },
  };
}

/**
 * The read replicas of DATABASE_READ_URL as `gwapi serve` opens them: one pool per host (so the router
 * chooses the replica per read, where libpq would choose once per connection), and the monitor that
 * watches them. libpq's parameters keep their meanings: `target_session_attrs` says which kind of node
 * may serve (the monitor asks each), and `load_balance_hosts` whether reads spread over the usable ones
 * (`random`, our default: several replicas are named to share the reads) or go to the first usable in
 * the URL's order (`disable`, libpq's default: the others wait as spares).
 */
import { type ConnectOptions, connect, type Sql } from '../connect.js';
import { hostLabel, hostUrl, parsePostgresUrl, type TargetSessionAttrs } from '../postgresUrl.js';
import { type MonitorOptions, ReplicaMonitor } from './monitor.js';

export interface ReplicaPool {
  /** `host:port`. */
  name: string;
  sql: Sql;
}

export interface ReadReplicas {
  pools: ReplicaPool[];
  loadBalance: 'random' | 'disable';
  sessionAttrs: TargetSessionAttrs;
  /** Watches the pools' hosts, against the primary behind `primaryUrl`, on connections of its own. */
  monitor(options: Pick<MonitorOptions, 'maxLagSeconds' | 'onChange'>): ReplicaMonitor;
  /** Ends every pool, the monitor's too (stop the monitor first). */
  close(): Promise<void>;
}

/** The pools of `readUrl`'s hosts, none connected yet (postgres.js connects on first use). */
export function openReadReplicas(readUrl: string, primaryUrl: string, options: ConnectOptions): ReadReplicas {
  const parsed = parsePostgresUrl(readUrl);
  const sessionAttrs = parsed.targetSessionAttrs ?? 'any';
  const loadBalance = parsed.loadBalanceHosts ?? 'random';
  const name = options.applicationName ?? 'gwapi';
  const pools = parsed.hosts.map((host, index) => ({
    name: hostLabel(host),
    sql: connect(hostUrl(readUrl, index), { ...options, applicationName: `${name} (reads)` }),
  }));
  const probes: Sql[] = [];
  const probeOf = (url: string) => {
    const probe = connect(url, { max: 1, applicationName: `${name} (replica monitor)` });
    probes.push(probe);
    return probe;
  };
  return {
    pools,
    loadBalance,
    sessionAttrs,
    monitor: (monitorOptions) =>
      new ReplicaMonitor({
        ...monitorOptions,
        sessionAttrs,
        primary: probeOf(primaryUrl),
        replicas: pools.map((pool, index) => ({ name: pool.name, probe: probeOf(hostUrl(readUrl, index)) })),
      }),
    async close() {
      await Promise.all([...pools.map((pool) => pool.sql), ...probes].map((sql) => sql.end({ timeout: 5 })));
    },
  };
}

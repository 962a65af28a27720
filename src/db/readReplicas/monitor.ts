/**
 * Watches the read replicas of DATABASE_READ_URL once a tick: whether each answers, whether it is a
 * standby, how far its replay is behind the primary (walSamples.ts). The router (readSources.ts) sends
 * new reads only to replicas this finds usable. Each replica and the primary are asked on a connection
 * of their own, so a pool full of streams cannot make a healthy replica look dead, and a probe that
 * hangs is never stacked behind another.
 */
import { NoAnswer, withTimeout } from '../../timeLimit.js';
import type { Sql } from '../connect.js';
import type { TargetSessionAttrs } from '../postgresUrl.js';
import { acceptedHosts, probeRole, type Role } from '../role.js';
import { lsnOf, WalSamples } from './walSamples.js';

/** How often the replicas and the primary are asked. */
export const MONITOR_INTERVAL_MS = 1000;
/** A probe not answered within this is missed. */
export const MONITOR_TIMEOUT_MS = 1000;
/**
 * Missed probes in a row that make an answering replica down: one slow answer on a busy machine is not
 * a dead replica. A refused connection (a stopped server) makes it down at once.
 */
export const MISSED_PROBES_BEFORE_DOWN = 3;

export type ReplicaState =
  /** Answers, is of a kind target_session_attrs allows, and lags at most READ_MAX_LAG_SECONDS. */
  | 'usable'
  /** Answers, but its replay is further behind than READ_MAX_LAG_SECONDS. */
  | 'lagging'
  /** Refuses, or misses MISSED_PROBES_BEFORE_DOWN probes in a row. */
  | 'down'
  /** Answers, but target_session_attrs rules it out (a primary where standbys are asked for, say). */
  | 'excluded';

export const REPLICA_STATES: readonly ReplicaState[] = ['usable', 'lagging', 'down', 'excluded'];

export interface ReplicaStatus {
  state: ReplicaState;
  /** Replay lag in seconds (0 for a node that is not in recovery); undefined until it answered once. */
  lagSeconds: number | undefined;
  /** Whether it is a hot standby (in recovery); undefined until it answered once. */
  standby: boolean | undefined;
  /** The primary's clock (ms since the epoch) up to which it holds every committed change. */
  heldThroughMs: number | undefined;
}

export interface MonitoredReplica {
  /** `host:port`, as metrics and logs name it. */
  name: string;
  /** A one-connection pool for the probe alone. */
  probe: Sql;
}

export interface MonitorOptions {
  replicas: readonly MonitoredReplica[];
  /** A one-connection pool on DATABASE_URL, for the WAL samples. */
  primary: Sql;
  maxLagSeconds: number;
  /** libpq's `target_session_attrs`, with its meanings, judged for each host of DATABASE_READ_URL. */
  sessionAttrs: TargetSessionAttrs;
  /** Told each change of a replica's state, with the driver's words when it went down. */
  onChange?: (replica: string, from: ReplicaState | undefined, to: ReplicaState, reason?: string) => void;
}

interface Probe {
  role: Role;
  /** The replay position of a standby; undefined for a node out of recovery. */
  replayed: bigint | undefined;
}

const DOWN: ReplicaStatus = {
  state: 'down',
  lagSeconds: undefined,
  standby: undefined,
  heldThroughMs: undefined,
};

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class ReplicaMonitor {
  private readonly samples: WalSamples;
  private readonly statuses = new Map<string, ReplicaStatus>();
  /** Probes missed in a row, per replica. */
  private readonly missed = new Map<string, number>();
  /** Probes still waited for: a replica that hangs gets no second one meanwhile. */
  private readonly pending = new Map<string, Promise<unknown>>();
  private samplePending: Promise<unknown> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(private readonly options: MonitorOptions) {
    // Long enough to measure lags well past the setting, bounded in memory by the tick.
    this.samples = new WalSamples(Math.max(60, options.maxLagSeconds * 3) * 1000);
  }

  /** One tick at once (so the first reads already know each replica), then one per interval. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), MONITOR_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
  }

  status(name: string): ReplicaStatus {
    return this.statuses.get(name) ?? DOWN;
  }

  /** Asks the primary and every replica, and judges each replica against the newest sample. */
  tick(): Promise<void> {
    this.ticking ??= this.askAll().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async askAll(): Promise<void> {
    const [, ...probes] = await Promise.allSettled([
      this.samplePrimary(),
      ...this.options.replicas.map((replica) => this.probe(replica)),
    ]);
    const now = performance.now();
    const answered = this.options.replicas.map((replica, i) => {
      const outcome = probes[i]!;
      return { replica, probe: outcome.status === 'fulfilled' ? outcome.value : undefined, outcome };
    });
    // prefer-standby: primaries only while no standby is usable.
    const accepted = acceptedHosts(
      this.options.sessionAttrs,
      answered.map(({ probe }) => probe?.role),
      (i) => this.lagSecondsOf(answered[i]!.probe!, now) <= this.options.maxLagSeconds,
    );
    answered.forEach(({ replica, probe, outcome }, i) => {
      if (outcome.status === 'rejected' && this.graceFor(replica.name, outcome.reason)) return;
      const reason = outcome.status === 'rejected' ? messageOf(outcome.reason) : undefined;
      this.judge(replica.name, probe, now, accepted[i]!, reason);
    });
  }

  /** Whether a replica that did not answer keeps its state for now (a missed probe, not a refusal). */
  private graceFor(name: string, reason: unknown): boolean {
    const missed = (this.missed.get(name) ?? 0) + 1;
    this.missed.set(name, missed);
    const known = this.statuses.get(name);
    return (
      reason instanceof NoAnswer &&
      known !== undefined &&
      known.state !== 'down' &&
      missed < MISSED_PROBES_BEFORE_DOWN
    );
  }

  private judge(
    name: string,
    probe: Probe | undefined,
    now: number,
    accepted: boolean,
    reason: string | undefined,
  ): void {
    let status: ReplicaStatus;
    if (!probe) status = DOWN;
    else {
      this.missed.delete(name);
      const lagSeconds = this.lagSecondsOf(probe, now);
      status = {
        state: !accepted ? 'excluded' : lagSeconds > this.options.maxLagSeconds ? 'lagging' : 'usable',
        lagSeconds,
        standby: probe.role.inRecovery,
        heldThroughMs:
          probe.replayed === undefined
            ? Number.POSITIVE_INFINITY
            : this.samples.heldThroughMs(probe.replayed),
      };
    }
    const before = this.statuses.get(name)?.state;
    this.statuses.set(name, status);
    if (before !== status.state) this.options.onChange?.(name, before, status.state, reason);
  }

  /** A node out of recovery is a primary: it holds everything it has, lag 0. */
  private lagSecondsOf(probe: Probe, now: number): number {
    return probe.replayed === undefined ? 0 : this.samples.lagMs(probe.replayed, now) / 1000;
  }

  private async probe(replica: MonitoredReplica): Promise<Probe> {
    // Still waiting for the previous answer: missed again.
    if (this.pending.has(replica.name)) throw new NoAnswer(MONITOR_TIMEOUT_MS);
    const asked = probeRole<{ replayed: string | null }>(
      replica.probe,
      replica.probe`pg_last_wal_replay_lsn()::text as replayed`,
    );
    this.pending.set(replica.name, asked);
    asked
      .catch(() => {})
      .finally(() => {
        if (this.pending.get(replica.name) === asked) this.pending.delete(replica.name);
      });
    const { inRecovery, readOnly, replayed } = await withTimeout(asked, MONITOR_TIMEOUT_MS);
    return {
      role: { inRecovery, readOnly },
      // A standby that has replayed nothing yet (just started) holds nothing: position 0, not a primary's.
      replayed: inRecovery ? lsnOf(replayed ?? '0/0') : undefined,
    };
  }

  /**
   * The primary's clock, snapshot and WAL position, in that order within one statement: the snapshot
   * after the clock, so a change stamped before the clock is from a transaction it lists; the position
   * after the snapshot, so the commit of every transaction it saw ended lies before the position. A
   * standby (DATABASE_URL pointing at one during a switch-over) gives no sample.
   */
  private async samplePrimary(): Promise<void> {
    if (this.samplePending) return;
    const asked = this.options.primary<{ at: number; snapshot: string; lsn: string | null }[]>`
      select extract(epoch from clock_timestamp())::float8 * 1000 as at,
             pg_current_snapshot()::text as snapshot,
             case when pg_is_in_recovery() then null else pg_current_wal_lsn()::text end as lsn`;
    this.samplePending = asked;
    asked
      .catch(() => {})
      .finally(() => {
        this.samplePending = undefined;
      });
    const [row] = await withTimeout(asked, MONITOR_TIMEOUT_MS);
    if (!row || row.lsn === null) return;
    const [xmin, xmax] = row.snapshot.split(':') as [string, string];
    this.samples.add({
      at: performance.now(),
      lsn: lsnOf(row.lsn),
      primaryTime: row.at,
      xmin: BigInt(xmin),
      xmax: BigInt(xmax),
    });
  }
}

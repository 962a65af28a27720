/**
 * Readiness: should this replica be sent requests now? The load balancer asks every few seconds, and
 * anyone may ask (the path is public), so an answer costs at most one `select 1` per second whatever
 * the rate of asking, and never more than one query is waiting for the pool.
 *
 * - database: `select 1` on the request pool answers within a second. Through the same pool as the
 *   requests on purpose: a replica whose pool stays full is as unable to serve as one whose database
 *   is gone, and the load balancer should send new requests elsewhere until it is not. With read
 *   replicas (DATABASE_READ_URL) the pools reads go to now (the usable replicas') and the primary's,
 *   where keys are looked up, are asked. A primary that does not answer while the replicas do is a
 *   warning: reads go on (a switch-over), and keys are looked up on a replica meanwhile (keys/clients.ts).
 * - replicas (with DATABASE_READ_URL only): each replica's state and lag. A warning while some are not
 *   usable, or none is and reads fall back to the primary; a failure only when none is and
 *   READ_FALLBACK is unavailable, since then this process can serve no read at all. Replicas are
 *   numbered in the URL's order: the answer is public, and names no address.
 * - migrations: every migration of this version is applied. Checked until it passes, then never again
 *   (`gwapi serve` refuses to start on an old schema, so this passes at the first check there). Checked
 *   on the request pools (each usable replica): a read replica replicates the migrations table, so a
 *   replica that has not yet replayed a migration is not ready for this version's queries.
 * - redis: a warning only, never a failure. Without Redis each replica limits on its own and keeps
 *   serving (src/limits/failover.ts, issue 4); failing readiness would take every replica out of the
 *   load balancer at once and turn a degraded limiter into an outage.
 * - shutdown: fails from the moment the replica begins to shut down (SIGTERM).
 *
 * The answer says what fails, in words for an operator, never a driver message or an address: those
 * go to the log, once per change of state.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Sql } from '../db/connect.js';
import { pendingMigrations } from '../db/migrate.js';
import type { ReplicaState } from '../db/readReplicas/monitor.js';
import type { ReadSources } from '../db/readReplicas/readSources.js';
import type { ClientLimits } from '../limits/types.js';
import { NoAnswer, withTimeout } from '../timeLimit.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface Check {
  status: CheckStatus;
  output?: string;
}

/** One read replica, numbered from 1 in DATABASE_READ_URL's order. */
export interface ReplicaReport {
  replica: number;
  state: ReplicaState;
  lagSeconds?: number;
}

export interface ReplicasCheck extends Check {
  replicas: ReplicaReport[];
}

export interface ReadinessReport {
  /** The worst of the checks: `fail` is 503, `pass` and `warn` are 200. */
  status: CheckStatus;
  checks: { database: Check; migrations: Check; redis: Check; shutdown: Check; replicas?: ReplicasCheck };
}

export interface ReadinessOptions {
  /** Where requests read. */
  reads: ReadSources;
  /** The pool keys are looked up in: DATABASE_URL's. */
  keysSql: Sql;
  limits: ClientLimits;
  logger: FastifyBaseLogger;
  /** How long the database may take to answer (ms). */
  timeoutMs?: number;
  /** How long a database answer is reused (ms). */
  cacheMs?: number;
}

const PASS: Check = { status: 'pass' };
const SEVERITY: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class Readiness {
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private shuttingDown = false;
  private migrationsCurrent = false;
  /** The `select 1` in flight, shared by every check that asks meanwhile. */
  private ping: Promise<[{ error: unknown } | undefined, { error: unknown } | undefined]> | undefined;
  private lastDatabase: { at: number; check: Check; error?: unknown } | undefined;
  private lastStatus: CheckStatus | undefined;

  constructor(private readonly options: ReadinessOptions) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.cacheMs = options.cacheMs ?? 1000;
  }

  /** From now on the replica is not ready (it is shutting down). */
  shutDown(): void {
    this.shuttingDown = true;
  }

  async check(): Promise<ReadinessReport> {
    const replicas = this.replicas();
    const database = await this.database();
    const migrations = await this.migrations(database);
    const checks = {
      database: database.check,
      migrations: migrations.check,
      redis: this.redis(),
      shutdown: this.shuttingDown
        ? { status: 'fail' as const, output: 'shutting down: running responses are finishing' }
        : PASS,
      ...(replicas && { replicas }),
    };
    const status = Object.values(checks).reduce<CheckStatus>(
      (worst, check) => (SEVERITY[check.status] > SEVERITY[worst] ? check.status : worst),
      'pass',
    );
    this.logChange(status, checks, database.error ?? migrations.error);
    return { status, checks };
  }

  private async database(): Promise<{ check: Check; error?: unknown }> {
    const last = this.lastDatabase;
    if (last && performance.now() - last.at < this.cacheMs) return last;
    const reads = this.requestPools();
    const { keysSql } = this.options;
    const timed = (pools: Sql[]) =>
      withTimeout(Promise.all(pools.map((sql) => sql`select 1`)), this.timeoutMs).then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
    this.ping ??= Promise.all([timed(reads), reads.includes(keysSql) ? undefined : timed([keysSql])]).finally(
      () => {
        this.ping = undefined;
      },
    );
    const [readsFailed, primaryFailed] = await this.ping;
    const outputOf = (error: unknown) => (error instanceof NoAnswer ? error.message : 'not reachable');
    let answer: { at: number; check: Check; error?: unknown };
    if (reads.length === 0) {
      answer = { at: performance.now(), check: { status: 'fail', output: 'no read replica is usable' } };
    } else if (readsFailed) {
      const { error } = readsFailed;
      answer = { at: performance.now(), check: { status: 'fail', output: outputOf(error) }, error };
    } else if (primaryFailed) {
      // Reads go on from the replicas (a switch-over), and key lookups with them (keys/clients.ts).
      const output = `the primary: ${outputOf(primaryFailed.error)}; reads and key lookups go on from the replicas`;
      answer = { at: performance.now(), check: { status: 'warn', output }, error: primaryFailed.error };
    } else {
      answer = { at: performance.now(), check: PASS };
    }
    this.lastDatabase = answer;
    return answer;
  }

  private async migrations(database: { check: Check }): Promise<{ check: Check; error?: unknown }> {
    if (this.migrationsCurrent) return { check: PASS };
    const pools = this.requestPools();
    if (database.check.status === 'fail' || pools.length === 0) {
      return { check: { status: 'fail', output: 'not checked: the database does not answer' } };
    }
    try {
      const everywhere = await withTimeout(
        Promise.all(pools.map((sql) => pendingMigrations(sql))),
        this.timeoutMs,
      );
      const pending = everywhere.reduce((most, one) => (one.length > most.length ? one : most));
      if (pending.length === 0) {
        this.migrationsCurrent = true;
        return { check: PASS };
      }
      return {
        check: { status: 'fail', output: `${pending.length} not applied: run gwapi migrate` },
      };
    } catch (error) {
      return { check: { status: 'fail', output: 'could not be checked' }, error };
    }
  }

  /** Where reads go now: the usable replicas, or the pool reads fall back to. */
  private requestPools(): Sql[] {
    const { reads } = this.options;
    const usable = new Set(
      reads
        .replicas()
        .filter(({ status }) => status.state === 'usable')
        .map(({ name }) => name),
    );
    const replicas = reads.sources.filter((source) => usable.has(source.name)).map((source) => source.sql);
    if (replicas.length > 0) return replicas;
    return reads.sources.filter((source) => !source.replica).map((source) => source.sql);
  }

  private replicas(): ReplicasCheck | undefined {
    const { reads } = this.options;
    const all = reads.replicas();
    if (all.length === 0) return undefined;
    const replicas = all.map(({ status }, index) => ({
      replica: index + 1,
      state: status.state,
      ...(status.lagSeconds !== undefined && { lagSeconds: Math.round(status.lagSeconds * 10) / 10 }),
    }));
    const usable = replicas.filter((r) => r.state === 'usable').length;
    // Excluded by target_session_attrs is the operator's choice (a primary listed for after a
    // switch-over), not a replica out of order.
    const eligible = replicas.filter((r) => r.state !== 'excluded').length;
    if (usable === eligible && usable > 0) return { status: 'pass', replicas };
    const others =
      replicas
        .filter((r) => r.state !== 'usable' && r.state !== 'excluded')
        .map((r) => `replica ${r.replica} ${r.state}${r.state === 'lagging' ? ` ${r.lagSeconds} s` : ''}`)
        .join(', ') || 'every one excluded by target_session_attrs';
    if (usable > 0) return { status: 'warn', output: `${usable} of ${eligible} usable; ${others}`, replicas };
    return reads.fallsBackToPrimary
      ? { status: 'warn', output: `none usable (${others}): reads go to the primary`, replicas }
      : { status: 'fail', output: `none usable (${others}): reads are refused (READ_FALLBACK)`, replicas };
  }

  private redis(): Check {
    switch (this.options.limits.state?.()) {
      case 'shared':
        return PASS;
      case 'fallback':
        return {
          status: 'warn',
          output: 'not answering: this replica limits clients on its own until Redis answers again',
        };
      case 'in-process':
        return { status: 'pass', output: 'not used: REDIS_URL is not set, limits are kept in this process' };
      default:
        return { status: 'pass', output: 'not used: client limits are lifted' };
    }
  }

  /** One log line when readiness changes, naming what fails and why (with the driver's words). */
  private logChange(status: CheckStatus, checks: ReadinessReport['checks'], error: unknown): void {
    if (status === this.lastStatus) return;
    const first = this.lastStatus === undefined;
    this.lastStatus = status;
    if (first && status === 'pass') return;
    const failing = Object.entries(checks)
      .filter(([, check]) => check.status !== 'pass')
      .map(([name, check]) => `${name}: ${check.output}`);
    const fields = { readiness: status, failing, ...(error ? { reason: messageOf(error) } : {}) };
    if (status === 'pass') this.options.logger.info(fields, 'ready');
    else this.options.logger.warn(fields, status === 'fail' ? 'not ready' : 'ready, degraded');
  }
}

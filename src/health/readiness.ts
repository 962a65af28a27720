/**
 * Readiness: should this replica be sent requests now? The load balancer asks every few seconds, and
 * anyone may ask (the path is public), so an answer costs at most one `select 1` per second whatever
 * the rate of asking, and never more than one query is waiting for the pool.
 *
 * - database: `select 1` on the request pool answers within a second. Through the same pool as the
 *   requests on purpose: a replica whose pool stays full is as unable to serve as one whose database
 *   is gone, and the load balancer should send new requests elsewhere until it is not. With a read
 *   replica (DATABASE_READ_URL) both pools requests use are asked: the replica's and the primary's,
 *   where keys are looked up. The primary not answering is then a warning only: reads and key lookups
 *   go on from the replica while an HA manager promotes a standby (README, "Primary switch-over").
 * - migrations: every migration of this version is applied. Checked until it passes, then never again
 *   (`gwapi serve` refuses to start on an old schema, so this passes at the first check there). Checked
 *   on the request pool: a read replica replicates the migrations table, so a replica that has not yet
 *   replayed a migration is not ready for this version's queries.
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
import type { ClientLimits } from '../limits/types.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface Check {
  status: CheckStatus;
  output?: string;
}

export interface ReadinessReport {
  /** The worst of the checks: `fail` is 503, `pass` and `warn` are 200. */
  status: CheckStatus;
  checks: { database: Check; migrations: Check; redis: Check; shutdown: Check };
}

export interface ReadinessOptions {
  /** The pool requests read from. */
  sql: Sql;
  /** The pool keys are looked up in, when it is another one (the primary, `sql` being a read replica). */
  keysSql?: Sql;
  limits: ClientLimits;
  logger: FastifyBaseLogger;
  /** How long the database may take to answer (ms). */
  timeoutMs?: number;
  /** How long a database answer is reused (ms). */
  cacheMs?: number;
}

const PASS: Check = { status: 'pass' };
const SEVERITY: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** What happened to a check, for the log only. */
class CheckFailure extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailure(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class Readiness {
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private shuttingDown = false;
  private migrationsCurrent = false;
  /** The `select 1`s in flight, shared by every check that asks meanwhile. */
  private ping:
    | Promise<{ reads: PromiseSettledResult<unknown>; keys: PromiseSettledResult<unknown> }>
    | undefined;
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
    const database = await this.database();
    const migrations = await this.migrations(database);
    const checks = {
      database: database.check,
      migrations: migrations.check,
      redis: this.redis(),
      shutdown: this.shuttingDown
        ? { status: 'fail' as const, output: 'shutting down: running responses are finishing' }
        : PASS,
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
    const { sql, keysSql = sql } = this.options;
    this.ping ??= Promise.allSettled([sql`select 1`, keysSql === sql ? undefined : keysSql`select 1`]).then(
      ([reads, keys]) => ({ reads, keys }),
    );
    const ping = this.ping.finally(() => {
      this.ping = undefined;
    });
    let answer: { at: number; check: Check; error?: unknown };
    try {
      const { reads, keys } = await withTimeout(ping, this.timeoutMs);
      if (reads.status === 'rejected') throw reads.reason;
      // Reads go on from the replica, and keys are looked up there meanwhile (keys/clients.ts): every
      // replica failing readiness at once over a switch-over of the primary would be the outage itself.
      answer =
        keys.status === 'rejected'
          ? {
              at: performance.now(),
              check: { status: 'warn', output: 'the primary (DATABASE_URL) is not reachable: reads go on' },
              error: keys.reason,
            }
          : { at: performance.now(), check: PASS };
    } catch (error) {
      const output = error instanceof CheckFailure ? error.message : 'not reachable';
      answer = { at: performance.now(), check: { status: 'fail', output }, error };
    }
    this.lastDatabase = answer;
    return answer;
  }

  private async migrations(database: { check: Check }): Promise<{ check: Check; error?: unknown }> {
    if (this.migrationsCurrent) return { check: PASS };
    if (database.check.status === 'fail') {
      return { check: { status: 'fail', output: 'not checked: the database does not answer' } };
    }
    try {
      const pending = await withTimeout(pendingMigrations(this.options.sql), this.timeoutMs);
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

/**
 * Migrations: numbered plain-SQL files in `sql/`, each applied once and recorded with a checksum.
 *
 * - One runner at a time: a session-level advisory lock, held on one reserved connection for the whole
 *   run, serialises concurrent runners (several replicas starting at once, or an older release, whose
 *   transaction-scoped lock on the same key conflicts with it): the second waits, then finds the work
 *   done. Not through PgBouncer in transaction mode: the run needs one server session throughout.
 * - Every statement runs with `lock_timeout`: a DDL statement queued for a table lock makes every later
 *   reader of that table queue behind it, so it must give up soon rather than stall the API. It is tried
 *   again with backoff, and after the last attempt fails with a message naming the oldest transaction.
 * - A file whose first lines hold `-- gwapi:no-transaction` runs outside a transaction, one statement
 *   at a time (CREATE INDEX CONCURRENTLY cannot run in one; a DO block may COMMIT between batches). Its
 *   statements must be safe to repeat (`if not exists`): a failed run is resumed from the start.
 *   A concurrent build waits longer (CONCURRENT_BUILD_LOCK_TIMEOUT_MS): no reader or writer waits for it.
 *   An INVALID index left by a failed concurrent build is dropped before the statement builds it again
 *   (`create index concurrently if not exists` would otherwise keep the broken one).
 * - A file whose first lines hold `-- gwapi:replaces SHA256` took the place of an earlier text of the
 *   same migration, with the same end state once the migrations after it have run: a database that
 *   applied that text is not refused.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type postgres from 'postgres';
import { UserError } from '../errors.js';
import type { Queryable, Sql } from './connect.js';
import { isConnectionLost } from './errorCodes.js';
import { refuseUnloadableTimescaleDb, TIMESCALEDB_MIGRATION } from './timescaleDbPreload.js';
import { beginReserved } from './transaction.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

/** Arbitrary but fixed: "gwapi" in ASCII. Shared by every replica and every version of this program. */
const MIGRATION_LOCK = 0x6777617069;

/**
 * The longest any statement of a migration waits for a lock. Readers that arrive meanwhile wait behind
 * it at most this long; the API's answers are then late, never failed.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 1000;
/**
 * The lock_timeout of a concurrent index build. Its lock (SHARE UPDATE EXCLUSIVE) conflicts with no read
 * and no write, so no request and no import queues behind it; it then waits for each older transaction
 * to end, which under a steady run of transactions longer than MIGRATION_LOCK_TIMEOUT_MS would never
 * end in time.
 */
export const CONCURRENT_BUILD_LOCK_TIMEOUT_MS = 60_000;
/** Attempts of a migration (or of one statement of a non-transactional one) that hit lock_timeout. */
export const MIGRATION_LOCK_ATTEMPTS = 6;
/** Wait before the second attempt; doubled before each further one, with jitter. */
export const MIGRATION_RETRY_BACKOFF_MS = 500;

/** The marker of a migration that runs outside a transaction. */
const NO_TRANSACTION = /^--\s*gwapi:no-transaction\s*$/m;
/** The checksum of an earlier text of the migration, which this one replaces. */
const REPLACES = /^--\s*gwapi:replaces\s+([0-9a-f]{64})\s*$/gm;
/** SQLSTATE lock_not_available: lock_timeout expired. */
const LOCK_NOT_AVAILABLE = '55P03';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
  /** Checksums of earlier texts it replaces (`-- gwapi:replaces`): applied, they count as this one. */
  replaces: string[];
  /** false: `-- gwapi:no-transaction`, run statement by statement. */
  transactional: boolean;
}

export interface MigrateResult {
  applied: Migration[];
  timescaledb: boolean;
}

export interface LockTimeout {
  /** The migration, and the statement of a non-transactional one. */
  what: string;
  attempt: number;
  attempts: number;
  /** The oldest other transaction of the database when it gave up: the likely holder. */
  oldest?: string;
}

export interface MigrateOptions {
  dir?: string;
  lockTimeoutMs?: number;
  concurrentBuildLockTimeoutMs?: number;
  attempts?: number;
  backoffMs?: number;
  /** Told of each attempt that gave up waiting and will be retried. */
  onLockTimeout?: (timeout: LockTimeout) => void;
  /**
   * Record 002_timescaledb without running it: measurements stays a plain table even where TimescaleDB
   * is installed but not preloaded, which is otherwise refused (timescaleDbPreload.ts).
   */
  withoutTimescaleDb?: boolean;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const text = await readFile(`${dir}/${file}`, 'utf8');
      const header = leadingComments(text);
      return {
        version: Number(file.slice(0, 3)),
        name: file.slice(4, -4),
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
        replaces: [...header.matchAll(REPLACES)].map((match) => match[1]!),
        transactional: !NO_TRANSACTION.test(header),
      };
    }),
  );
}

const leadingComments = (text: string) => /^(?:\s*--[^\n]*\n)*/.exec(text)![0];

/** The statements of a non-transactional migration: split at each `;` that ends a line outside a `$tag$` body. */
export function statementsOf(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let body: string | undefined;
  for (const match of text.matchAll(/\$(?:[A-Za-z_]\w*)?\$|;[ \t]*(?:\n|$)/g)) {
    const token = match[0];
    if (token.startsWith('$')) body = body === undefined ? token : body === token ? undefined : body;
    else if (body === undefined) {
      parts.push(text.slice(start, match.index));
      start = match.index + token.length;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => withoutComments(part) !== '');
}

const migrationName = (m: Migration) => `${String(m.version).padStart(3, '0')}_${m.name}`;

export class MigrationChangedError extends Error {
  constructor(migration: Migration) {
    super(
      `migration ${migrationName(migration)} was changed after it was applied; ` +
        'add a new migration instead of editing an applied one',
    );
  }
}

export class MigrationLockTimeoutError extends UserError {
  constructor(timeout: LockTimeout, lockTimeoutMs: number) {
    super(
      `${timeout.what}: no lock within lock_timeout (${lockTimeoutMs} ms) in ${timeout.attempts} attempts, ` +
        `so nothing waits behind it; ${timeout.oldest ? `oldest transaction: ${timeout.oldest}; ` : ''}` +
        'run `gwapi migrate` again when it has ended (it goes on where it stopped)',
    );
  }
}

export async function migrate(sql: Sql, options: MigrateOptions = {}): Promise<MigrateResult> {
  return await asRunner(sql, options, (runner) => applyPending(runner, options));
}

/** The one runner's session: the runner lock held, lock_timeout set, and its retry. */
export interface Runner {
  session: postgres.ReservedSql;
  lockTimeoutMs: number;
  /** Runs `work` again while it fails on lock_timeout, up to MIGRATION_LOCK_ATTEMPTS in all. */
  retrying: RetryingOnLockTimeout;
}

export type RetryingOnLockTimeout = <T>(
  what: string,
  work: () => Promise<T>,
  timeoutMs?: number,
) => Promise<T>;

/**
 * Runs `work` as the one runner of migrations (the module's comment): on a reserved session holding
 * the runner lock, under lock_timeout; `gwapi migrate --finish` (finish.ts) runs its DDL so too, and
 * moves rows as the one holder of a lock of its own (`lock`).
 */
export async function asRunner<T>(
  sql: Sql,
  options: MigrateOptions,
  work: (runner: Runner) => Promise<T>,
  lock = MIGRATION_LOCK,
): Promise<T> {
  const session = await sql.reserve();
  // A session that is gone took its lock and settings with it: writing to it again would throw
  // postgres.js's uncaught TypeError (errorCodes.ts), and releasing it would hand it back to the pool.
  let lost = false;
  try {
    await takeRunnerLock(session, lock);
    try {
      const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
      await setLockTimeout(session, lockTimeoutMs);
      return await work({
        session,
        lockTimeoutMs,
        retrying: retryOnLockTimeout(session, options, lockTimeoutMs),
      });
    } catch (error) {
      lost = isConnectionLost(error);
      throw error;
    } finally {
      if (!lost) {
        await session`select pg_advisory_unlock(${lock})`.catch(() => {});
        await session`reset lock_timeout`.catch(() => {});
      }
    }
  } catch (error) {
    lost ||= isConnectionLost(error);
    throw error;
  } finally {
    if (!lost) session.release();
  }
}

/** Applies every migration not yet recorded, in order. */
export async function applyPending(runner: Runner, options: MigrateOptions): Promise<MigrateResult> {
  const { session, lockTimeoutMs, retrying } = runner;
  const migrations = await readMigrations(options.dir);
  await retrying(
    'schema_migrations',
    () => session`
    create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`,
  );
  const pending: Migration[] = [];
  for (const migration of migrations) {
    const [done] = await session<{ checksum: string }[]>`
      select checksum from schema_migrations where version = ${migration.version}`;
    if (!done) pending.push(migration);
    else if (done.checksum !== migration.checksum && !migration.replaces.includes(done.checksum))
      throw new MigrationChangedError(migration);
  }
  const timescale = pending.some((m) => m.name === TIMESCALEDB_MIGRATION);
  if (timescale && !options.withoutTimescaleDb) await refuseUnloadableTimescaleDb(session);
  const applied: Migration[] = [];
  for (const migration of pending) {
    const record = (q: Queryable) => q`
      insert into schema_migrations (version, name, checksum)
      values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    if (migration.name === TIMESCALEDB_MIGRATION && options.withoutTimescaleDb) {
      await record(session);
    } else if (migration.transactional) {
      await retrying(`migration ${migrationName(migration)}`, () =>
        beginReserved(session, async () => {
          await session.unsafe(migration.sql);
          await record(session);
        }),
      );
    } else {
      for (const statement of statementsOf(migration.sql)) {
        const what = `migration ${migrationName(migration)} (${withoutComments(statement).slice(0, 60)}…)`;
        if (!CONCURRENT_INDEX.test(withoutComments(statement))) {
          await retrying(what, () => session.unsafe(statement));
          continue;
        }
        const buildTimeoutMs = options.concurrentBuildLockTimeoutMs ?? CONCURRENT_BUILD_LOCK_TIMEOUT_MS;
        await setLockTimeout(session, buildTimeoutMs);
        try {
          await retrying(
            what,
            async () => {
              await dropInvalidIndex(session, statement);
              await session.unsafe(statement);
            },
            buildTimeoutMs,
          );
        } finally {
          await setLockTimeout(session, lockTimeoutMs);
        }
      }
      await record(session);
    }
    applied.push(migration);
  }
  return { applied, timescaledb: await usesTimescaleDb(session) };
}

/** How often a runner asks again for the lock another runner holds. */
const RUNNER_POLL_MS = 100;

/**
 * Polled, not waited for: a session blocked in pg_advisory_lock holds a snapshot, which a concurrent
 * index build of the runner holding the lock would wait for (a deadlock).
 */
async function takeRunnerLock(session: Sql, lock: number): Promise<void> {
  for (;;) {
    const [{ locked }] = (await session`select pg_try_advisory_lock(${lock}) as locked`) as [
      { locked: boolean },
    ];
    if (locked) return;
    await sleep(RUNNER_POLL_MS);
  }
}

const setLockTimeout = (session: Queryable, ms: number) =>
  session`select set_config('lock_timeout', ${`${ms}ms`}, false)`;

/**
 * Work retried while it fails on lock_timeout, with backoff; `q` names the oldest transaction when it
 * gives up.
 */
export function retryOnLockTimeout(
  q: Queryable,
  options: MigrateOptions,
  lockTimeoutMs: number,
): RetryingOnLockTimeout {
  const attempts = options.attempts ?? MIGRATION_LOCK_ATTEMPTS;
  const backoffMs = options.backoffMs ?? MIGRATION_RETRY_BACKOFF_MS;
  return async <T>(what: string, work: () => Promise<T>, timeoutMs = lockTimeoutMs): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
        const timeout = { what, attempt, attempts, oldest: await oldestTransaction(q) };
        if (attempt >= attempts) throw new MigrationLockTimeoutError(timeout, timeoutMs);
        options.onLockTimeout?.(timeout);
        await sleep(backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()));
      }
    }
  };
}

async function oldestTransaction(q: Queryable): Promise<string | undefined> {
  const [oldest] = await q<{ pid: number; state: string; seconds: number; query: string }[]>`
    select pid, state, extract(epoch from clock_timestamp() - xact_start)::float8 as seconds,
           left(btrim(regexp_replace(query, '[[:space:]]+', ' ', 'g')), 60) as query
    from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null
    order by xact_start limit 1`;
  return oldest
    ? `pid ${oldest.pid}, ${oldest.state} for ${oldest.seconds.toFixed(1)} s: ${oldest.query}`
    : undefined;
}

/** A statement on one line, without its comment lines. */
const withoutComments = (statement: string) =>
  statement
    .replace(/^\s*--[^\n]*$/gm, '')
    .replace(/\s+/g, ' ')
    .trim();

const CONCURRENT_INDEX = /^create\s+(?:unique\s+)?index\s+concurrently\s+(?:if\s+not\s+exists\s+)?([\w."]+)/i;

/** Drops the index `statement` builds concurrently if a failed build left it INVALID. */
async function dropInvalidIndex(session: Sql, statement: string): Promise<void> {
  const name = CONCURRENT_INDEX.exec(withoutComments(statement))?.[1];
  if (!name) return;
  const [index] = await session<{ valid: boolean }[]>`
    select indisvalid as valid from pg_index where indexrelid = to_regclass(${name})`;
  if (index && !index.valid) await session.unsafe(`drop index concurrently if exists ${name}`);
}

/** Migrations in `sql/` not yet recorded in the database (empty when the schema is current). */
export async function pendingMigrations(sql: Sql, dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const all = await readMigrations(dir);
  const [table] = await sql`select to_regclass('schema_migrations') as name`;
  if (!table?.name) return all;
  const done = new Set(
    (await sql<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version),
  );
  return all.filter((m) => !done.has(m.version));
}

/** Whether `measurements` is a TimescaleDB hypertable (false on plain PostgreSQL). */
export async function usesTimescaleDb(sql: Queryable): Promise<boolean> {
  const [ext] = await sql`select 1 from pg_extension where extname = 'timescaledb'`;
  if (!ext) return false;
  const [hypertable] = await sql`
    select 1 from timescaledb_information.hypertables where hypertable_name = 'measurements'`;
  return Boolean(hypertable);
}

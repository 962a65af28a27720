/**
 * `gwapi migrate --finish`: the steps of the migrations that only a database no release before this one
 * serves may take. One today, sql/016's (valueStorage.ts, docs/decisions/0022): `measurements.value`
 * may be null, then every row whose value fits moves into thousandths. The release before reads `value`
 * alone, and would read null.
 *
 * - Pending migrations are applied first (`migrate`, under its runner lock), then `value` loses NOT
 *   NULL: an instant, but under ACCESS EXCLUSIVE, so under the migrations' lock_timeout and retry.
 *   From that commit on every writer stores thousandths (valueStorage.ts).
 * - The rows move chunk by chunk (TimescaleDB; the plain table as one), in transactions of tubes whose
 *   rows to move add up to at most ROWS_PER_TRANSACTION. Each transaction locks its tubes as an import
 *   does (in id order, `for no key update`), skipping those an import holds: those are taken once the
 *   chunk's others are done, waiting their turn then. So an import never waits long for the finish,
 *   and a deadlock with one (or with another finish) is retried (retry.ts).
 * - Resumable and idempotent: only rows that still hold a fitting double are selected, so a second run
 *   moves what is left (nothing). A second one at once waits for the first (a lock of its own, taken
 *   as the runner lock is), then finds nothing; the runner lock is not held while rows move, which may
 *   take hours, so a replica's `gwapi migrate` does not wait for it.
 * - A chunk that was compressed is left partial by the updates and is recompressed at once with the
 *   compression job's call (sql/014), under lock_timeout, but whole: its pages then hold only the new
 *   batches. One whose lock stays taken is left to that job's next run. A chunk not compressed is
 *   vacuumed, as an import leaves it.
 * - No change is recorded: every row decodes to the very same double, so no series version, validator,
 *   sync delta, day rollup or latest measurement has anything to change.
 */
import type { Queryable, Sql } from './connect.js';
import {
  applyPending,
  asRunner,
  MIGRATION_LOCK_TIMEOUT_MS,
  type MigrateOptions,
  type MigrateResult,
  MigrationLockTimeoutError,
  retryOnLockTimeout,
  usesTimescaleDb,
} from './migrate.js';
import { retryIfConflicted } from './retry.js';
import { begin } from './transaction.js';
import { storesThousandths } from './valueStorage.js';

/** Rows a transaction moves at most (one tube's rows of a chunk may be more). */
export const ROWS_PER_TRANSACTION = 50_000;

/** A chunk done. */
export interface ChunkFinished {
  /** The chunk, or `measurements` on plain PostgreSQL. */
  name: string;
  /** 1-based, of `chunks`. */
  index: number;
  chunks: number;
  moved: number;
  seconds: number;
  /** Compressed, and recompressed after its rows moved. */
  recompressed: boolean;
  /** The chunk was compressed and its recompression gave up on lock_timeout: the job will do it. */
  leftToJob: boolean;
}

export interface FinishOptions extends MigrateOptions {
  rowsPerTransaction?: number;
  onChunk?: (chunk: ChunkFinished) => void;
}

export interface FinishResult extends MigrateResult {
  /** `value` lost NOT NULL in this run (false: an earlier run, or a new install, did it). */
  madeNullable: boolean;
  moved: number;
  chunks: number;
}

/** "gwapi" + 1 in ASCII: the migrations' runner lock (migrate.ts) is "gwapi". */
const FINISH_LOCK = 0x677761706a;

export function finishMigrations(sql: Sql, options: FinishOptions = {}): Promise<FinishResult> {
  return asRunner(sql, options, () => finish(sql, options), FINISH_LOCK);
}

async function finish(sql: Sql, options: FinishOptions): Promise<FinishResult> {
  const { migrated, madeNullable } = await asRunner(sql, options, async (runner) => {
    const migrated = await applyPending(runner, options);
    if (await storesThousandths(runner.session)) return { migrated, madeNullable: false };
    await runner.retrying(
      'finish: measurements.value may be null',
      () => runner.session`alter table measurements alter column value drop not null`,
    );
    return { migrated, madeNullable: true };
  });
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
  const retrying = retryOnLockTimeout(sql, options, lockTimeoutMs);
  const mover: Mover = {
    sql,
    lockTimeoutMs,
    rowsPerTransaction: options.rowsPerTransaction ?? ROWS_PER_TRANSACTION,
    retrying: (what, work) => retrying(what, () => retryIfConflicted(work, () => true)),
  };
  const chunks = (await usesTimescaleDb(sql)) ? await chunksOf(sql) : [WHOLE_TABLE];
  let moved = 0;
  for (const [i, chunk] of chunks.entries()) {
    const started = performance.now();
    const rows = await moveChunk(mover, chunk);
    let recompressed = false;
    let leftToJob = false;
    if (chunk.compressed && rows > 0) {
      try {
        await retrying(`finish: recompress ${chunk.name}`, () =>
          begin(sql, async (tx) => {
            await tx`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`;
            // Whole, into a new compressed table, as 013 has every session recompress (0114), which a
            // session older than 013 would not: segment by segment, the batches replaced would stay in
            // the old table's pages, and the rows decompressed in the chunk's own, as free space.
            await tx`set local timescaledb.enable_segmentwise_recompression = off`;
            await tx`select compress_chunk(${chunk.name}::regclass, if_not_compressed => true)`;
          }),
        );
        recompressed = true;
      } catch (error) {
        if (!(error instanceof MigrationLockTimeoutError)) throw error;
        leftToJob = true;
      }
    } else if (rows > 0) {
      // As an import leaves what it wrote (importers' vacuumMeasurements): the index-only scans of
      // a series need the visibility map, and the old versions' room goes to the next writes.
      await sql.unsafe(`vacuum (analyze) ${chunk.name}`);
    }
    moved += rows;
    options.onChunk?.({
      name: chunk.name,
      index: i + 1,
      chunks: chunks.length,
      moved: rows,
      seconds: (performance.now() - started) / 1000,
      recompressed,
      leftToJob,
    });
  }
  return { ...migrated, madeNullable, moved, chunks: chunks.length };
}

interface Chunk {
  name: string;
  /** Its range of observed_at as text, or none for the plain table. */
  start?: string;
  end?: string;
  compressed: boolean;
}

const WHOLE_TABLE: Chunk = { name: 'measurements', compressed: false };

async function chunksOf(sql: Sql): Promise<Chunk[]> {
  return await sql<Chunk[]>`
    select format('%I.%I', chunk_schema, chunk_name) as name, range_start::text as start,
           range_end::text as "end", is_compressed as compressed
    from timescaledb_information.chunks where hypertable_name = 'measurements'
    order by range_start`;
}

interface Mover {
  sql: Sql;
  lockTimeoutMs: number;
  rowsPerTransaction: number;
  /** Again on lock_timeout, and on a deadlock. */
  retrying: <T>(what: string, work: () => Promise<T>) => Promise<T>;
}

/** Moves the rows of `chunk` whose value fits into thousandths; returns how many. */
async function moveChunk(mover: Mover, chunk: Chunk): Promise<number> {
  const { sql, retrying } = mover;
  const left = await sql<{ tube_id: number; rows: string }[]>`
    select tube_id, count(*) as rows from measurements where ${inChunk(sql, chunk)} and ${fits(sql)}
    group by tube_id order by tube_id`;
  let moved = 0;
  // Tubes an import held when their turn came: taken after the others, then waited for.
  const held: number[] = [];
  for (const batch of batches(left, mover.rowsPerTransaction)) {
    const { rows, skipped } = await retrying(`finish: ${chunk.name}`, () =>
      moveTubes(mover, chunk, batch, { skipHeld: true }),
    );
    moved += rows;
    held.push(...skipped);
  }
  if (held.length > 0) {
    const { rows } = await retrying(`finish: ${chunk.name}`, () =>
      moveTubes(mover, chunk, held, { skipHeld: false }),
    );
    moved += rows;
  }
  return moved;
}

/**
 * The chunk's range as constants, not parameters: TimescaleDB then plans the statement on that chunk
 * alone. Under a generic plan its update would decompress the batches of the same tubes in every
 * compressed chunk.
 */
const inChunk = (q: Queryable, chunk: Chunk) =>
  chunk.start === undefined
    ? q`true`
    : q.unsafe(
        `observed_at >= ${literal(chunk.start)}::timestamptz and observed_at < ${literal(chunk.end!)}::timestamptz`,
      );

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

const fits = (q: Queryable) => q`value is not null and measurement_thousandths(value) is not null`;

/** One transaction: the rows of `tubes` in `chunk` that fit. */
async function moveTubes(
  { sql, lockTimeoutMs }: Mover,
  chunk: Chunk,
  tubes: readonly number[],
  { skipHeld }: { skipHeld: boolean },
): Promise<{ rows: number; skipped: number[] }> {
  return await begin(
    sql,
    async (tx) => {
      await tx`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`;
      const locked = await tx<{ id: number }[]>`
        select id from tubes where id = any(${tubes}::int[]) order by id
        for no key update ${skipHeld ? tx`skip locked` : tx``}`;
      const ids = new Set(locked.map((row) => row.id));
      const updated = await tx`
        update measurements set value_thousandths = measurement_thousandths(value), value = null
        where tube_id = any(${[...ids]}::int[]) and ${inChunk(tx, chunk)} and ${fits(tx)}`;
      return { rows: updated.count, skipped: tubes.filter((id) => !ids.has(id)) };
    },
    { write: true },
  );
}

/** Tubes in id order, cut where their rows would pass `rows`. */
function batches(tubes: readonly { tube_id: number; rows: string }[], rows: number): number[][] {
  const all: number[][] = [];
  let batch: number[] = [];
  let inBatch = 0;
  for (const tube of tubes) {
    if (batch.length > 0 && inBatch + Number(tube.rows) > rows) {
      all.push(batch);
      batch = [];
      inBatch = 0;
    }
    batch.push(tube.tube_id);
    inBatch += Number(tube.rows);
  }
  if (batch.length > 0) all.push(batch);
  return all;
}

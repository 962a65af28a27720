/**
 * The SQL of the measurements endpoint. Measurements leave the database as binary COPY output, decoded
 * into columns (batch.ts): no time or number is printed as text and parsed back. COPY takes no bind
 * parameters, so its select carries its values as literals (literals.ts).
 */
import type { Queryable, Sql } from '../../db/connect.js';
import { usesTimescaleDb } from '../../db/migrate.js';
import { type BatchShape, CopyBinaryDecoder, type MeasurementBatch } from '../batch.js';
import { bucketsOf } from './buckets.js';
import { instantLiteral, integerLiteral } from './literals.js';

export interface TubeRow {
  /** Internal id: what grants and measurements refer to. */
  id: number;
  unit: string;
  verticalDatum: string;
  /** What the series' validators derive from (sql/004): a bigint as text, and its time. */
  seriesVersion: string;
  seriesChangedAt: Date;
}

/** A tube by its identifier (canonical lower-case UUID text). */
export async function findTube(sql: Queryable, identifier: string): Promise<TubeRow | undefined> {
  const [tube] = await sql<TubeRow[]>`
    select id, unit, vertical_datum as "verticalDatum", series_version::text as "seriesVersion",
           series_changed_at as "seriesChangedAt"
    from tubes where identifier = ${identifier}::uuid`;
  return tube;
}

/**
 * Which tube a select reads and what it writes as its `tube`, as SQL expressions: for the series its
 * id and 0; for many tubes (networkMeasurements/sql.ts) the columns of the list it walks.
 */
export interface TubeColumns {
  id: string;
  position: string;
}

const columnsOf = (tube: number | TubeColumns): TubeColumns =>
  typeof tube === 'number' ? { id: integerLiteral(tube), position: '0::int4' } : tube;

/**
 * The measurements of one tube in [from, to), oldest first, as the columns of a raw batch (tube 0 for
 * the series). The primary key (tube_id, observed_at) include (value) answers it with an index-only
 * scan, already in order. Also run plainly and under EXPLAIN by the TimescaleDB test.
 */
export function seriesSelect(tube: number | TubeColumns, from: string, to: string): string {
  const { id, position } = columnsOf(tube);
  return `select ${position} as tube, observed_at, value from measurements
    where tube_id = ${id}
      and observed_at >= ${instantLiteral(from)} and observed_at < ${instantLiteral(to)}
    order by observed_at`;
}

/**
 * What cuts a series into buckets: TimescaleDB's time_bucket where measurements is a hypertable (its
 * planner knows the function, and so can read the chunks in bucket order); on plain PostgreSQL each
 * bucket's own range of the primary key (see aggregateSelect). Both count whole strides from `from`.
 */
export type BucketFunction = 'time_bucket' | 'date_bin';

/** The database behind a pool does not change its kind while the process runs: asked once per pool. */
const bucketFunctions = new WeakMap<Sql, BucketFunction>();

/** The bucket function of the database behind `pool`, asked on `sql` (one of its connections) once. */
export async function bucketFunctionOf(pool: Sql, sql: Queryable): Promise<BucketFunction> {
  let known = bucketFunctions.get(pool);
  if (!known) {
    known = (await usesTimescaleDb(sql)) ? 'time_bucket' : 'date_bin';
    bucketFunctions.set(pool, known);
  }
  return known;
}

export interface Bucketing {
  bucketFunction: BucketFunction;
  /** The bucket length (query.ts, AGGREGATE_SECONDS). */
  seconds: number;
}

/**
 * The buckets of one tube's measurements in [from, to), oldest first, each starting `seconds` after
 * the one before from `from` on, as the columns of an aggregated batch (what a bucket computes:
 * buckets.ts).
 *
 * On plain PostgreSQL, which does not know that date_bin keeps the order of observed_at, grouping the
 * interval by bucket sorts every row of it. So each bucket is read on its own, from the stride number
 * k (perBucket). Empty buckets are read too (one index probe each) and left out.
 */
export function aggregateSelect(
  tubeSelected: number | TubeColumns,
  from: string,
  to: string,
  { bucketFunction, seconds }: Bucketing,
): string {
  const { id: tube, position } = columnsOf(tubeSelected);
  const buckets = bucketsOf(from, to, seconds);
  if (bucketFunction === 'time_bucket') {
    return `select ${position} as tube, bucket as observed_at, ${buckets.aggregates}
      from (
        select ${buckets.timeBucket('observed_at')} as bucket, observed_at, value
        from measurements
        where tube_id = ${tube} and observed_at >= ${buckets.start} and observed_at < ${buckets.end}
      ) measured
      group by bucket
      order by bucket`;
  }
  return `select ${position} as tube, ${buckets.columns}
    from generate_series(0::int8, ${buckets.count} - 1) as k
    ${buckets.perBucket(tube, 'k')}
    where measured.count > 0
    order by k`;
}

/** The columns a select returns: aggregated when it has min, max and count. */
export const shapeOf = (aggregate: unknown): BatchShape => (aggregate ? 'aggregated' : 'raw');

/** Decoded batches waiting for the caller at most: the rest waits in the socket, holding back the server. */
const BATCHES_AHEAD = 2;

/**
 * The stream postgres.js hands out for `COPY … TO STDOUT`: it calls `push` with each CopyData message's
 * bytes (one row each), pauses its socket when `push` returns false, resumes it in `_read`, and ends
 * the stream with `push(null)`.
 */
interface CopyOutput {
  push(chunk: Buffer | null): boolean;
  _read(size: number): void;
  read(): Buffer | null;
  once(event: 'error' | 'end', listener: (error?: unknown) => void): unknown;
}

/**
 * The rows of `select` (seriesSelect, aggregateSelect, or any select of the same columns) as
 * MeasurementBatches of `batchSize` rows, from `COPY (select) TO STDOUT (FORMAT binary)` on `tx`.
 * Must run in a transaction (the snapshot).
 *
 * The rows are decoded as postgres.js hands them over, through the output stream's own `push`: a
 * stream event per row would cost more than decoding it (bench/README.md, "Row source"). `push`
 * answers false while BATCHES_AHEAD batches wait, which pauses the socket, so a slow consumer holds
 * back the database; taking a batch resumes it.
 *
 * When the caller stops early, the COPY is cancelled and the rest of its output dropped, so the
 * connection is idle in the transaction again by the time this generator has returned. An output
 * without its trailer (a lost connection can end the stream early) is an error, never a short series.
 */
export async function* measurementBatches(
  tx: Queryable,
  select: string,
  shape: BatchShape,
  batchSize: number,
): AsyncGenerator<MeasurementBatch> {
  const query = tx.unsafe(`copy (${select}) to stdout (format binary)`);
  const output = (await query.readable()) as unknown as CopyOutput;
  const waiting: MeasurementBatch[] = [];
  let failure: { error: unknown } | undefined;
  let ended = false;
  let dropping = false;
  let paused = false;
  let wake: (() => void) | undefined;
  const decoder = new CopyBinaryDecoder(shape, batchSize, (batch) => {
    waiting.push(batch);
    wake?.();
  });
  const fail = (error: unknown) => {
    failure ??= { error };
    wake?.();
  };
  // The COPY is over once its output ended or failed: only then may the transaction send anything.
  let outputOver!: () => void;
  const over = new Promise<void>((resolve) => {
    outputOver = resolve;
  });
  /** Lets postgres.js read its socket again (its `_read`); nothing to do once the connection is gone. */
  const resume = () => {
    paused = false;
    try {
      output._read(0);
    } catch {
      // The connection is gone, and its loss reaches the query.
    }
  };
  const end = () => {
    if (ended || dropping || failure) return;
    try {
      decoder.end();
      ended = true;
    } catch (error) {
      fail(error);
    }
    wake?.();
    // The COPY's last messages (its completion) may wait behind a paused socket.
    if (paused) resume();
  };
  output.push = (chunk) => {
    if (chunk === null) {
      outputOver();
      end();
      return false;
    }
    if (dropping || failure) return true;
    try {
      decoder.write(chunk);
    } catch (error) {
      fail(error);
      return true;
    }
    paused = waiting.length >= BATCHES_AHEAD;
    return !paused;
  };
  output.once('error', (error) => {
    outputOver();
    fail(error);
  });
  // What arrived with the COPY's start (all of a short one, its end too) went through the stream's
  // own push before this one took over: read from the stream, whose end then comes as its event.
  output.once('end', () => {
    outputOver();
    end();
  });
  for (let early = output.read(); early !== null; early = output.read()) output.push(early);
  try {
    while (true) {
      if (failure) throw failure.error;
      const batch = waiting.shift();
      if (batch) {
        if (paused && waiting.length < BATCHES_AHEAD) resume();
        yield batch;
      } else if (ended) {
        return;
      } else {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    }
  } finally {
    if (!ended) {
      // Stopped early (or the output was malformed): the rest is dropped as it comes, until the
      // cancelled COPY ends either way.
      dropping = true;
      resume();
      // Delivered before the transaction goes on: a cancel that arrived later could hit a statement
      // of the next request on this connection. One that finds the COPY over is ignored (idle backend).
      const cancelled = Promise.resolve(query.cancel()).catch(() => {});
      await over;
      await cancelled;
    }
  }
}

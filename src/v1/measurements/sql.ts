/**
 * The SQL of the measurements endpoint. Times travel as RFC 3339 text both ways (no Date objects), and
 * values as PostgreSQL's text of the double (why: asNumber in src/http/jsonSchema.ts).
 */
import type { PendingQuery, Row } from 'postgres';
import type { Queryable, Sql } from '../../db/connect.js';
import { usesTimescaleDb } from '../../db/migrate.js';
import { bucketAggregates, bucketStart } from './buckets.js';

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

export interface MeasurementRow {
  /** RFC 3339 in UTC, as the API returns it: `2024-01-01T00:00:00.5Z`. */
  observedAt: string;
  /** The stored double as PostgreSQL's shortest text (`-1.23`), which the serializer passes on. */
  value: string;
}

/**
 * The measurements of one tube in [from, to), oldest first: the query of the series cursor, also run
 * plainly and under EXPLAIN by the TimescaleDB test. The primary key (tube_id, observed_at) include
 * (value) answers it with an index-only scan, already in order.
 */
export function seriesSelect(sql: Queryable, tubeId: number, from: string, to: string) {
  return sql`
    select replace(replace(observed_at::text, ' ', 'T'), '+00', 'Z') as "observedAt", value::text as value
    from measurements
    where tube_id = ${tubeId} and observed_at >= ${from}::timestamptz and observed_at < ${to}::timestamptz
    order by observed_at`;
}

/**
 * One bucket of an aggregated series: a MeasurementRow whose `observedAt` is the bucket's start and
 * `value` its mean, all as text the writers pass on (`count` a decimal integer). The row of a raw series
 * has none of the extra fields, which is how the writers tell the two apart.
 */
export interface AggregateRow extends MeasurementRow {
  min: string;
  max: string;
  count: string;
}

/**
 * What cuts a series into buckets: TimescaleDB's time_bucket where measurements is a hypertable (its
 * planner knows the function, and so can read the chunks in bucket order), PostgreSQL's date_bin
 * elsewhere. Both count whole strides from the origin, so with the same origin they agree.
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
 * the one before from `from` on, on either storage (buckets.ts: what each bucket computes).
 */
export function aggregateSelect(
  sql: Queryable,
  tubeId: number,
  from: string,
  to: string,
  bucketing: Bucketing,
) {
  const { mean, min, max, count } = bucketAggregates(sql);
  return sql`
    select replace(replace(bucket::text, ' ', 'T'), '+00', 'Z') as "observedAt",
           ${mean}::text as value, ${min}::text as min, ${max}::text as max, ${count}::text as count
    from (
      select ${bucketStart(sql, bucketing, from, sql`observed_at`)} as bucket, observed_at, value
      from measurements
      where tube_id = ${tubeId} and observed_at >= ${from}::timestamptz and observed_at < ${to}::timestamptz
    ) measured
    group by bucket
    order by bucket`;
}

/**
 * FETCHes kept in flight on the connection. With one, PostgreSQL waits a round trip at every batch
 * while Node finishes decoding the last rows; with two it always has the next batch to read, and Node
 * decodes one while the other arrives; three gain nothing (bench/README.md, "What the hot path does").
 */
const FETCHES_IN_FLIGHT = 2;

/**
 * The rows of `select` (seriesSelect or aggregateSelect) from a server-side cursor, `batchSize` rows at a time; at most
 * FETCHES_IN_FLIGHT batches are read ahead of the caller. Must run in a transaction, which also closes
 * the cursor.
 *
 * A declared cursor and FETCH rather than postgres.js's `.cursor()`: that one leaves the protocol
 * exchange open between batches, and a backend that dies at that moment (restart, failover,
 * pg_terminate_backend) leaves the driver's connection in a state where its next statement fails and
 * its reconnect waits for connect_timeout. Each FETCH is a complete exchange, so between batches the
 * session is simply idle in transaction, and a lost connection fails cleanly.
 */
export async function* measurementBatches<R extends MeasurementRow = MeasurementRow>(
  tx: Queryable,
  select: PendingQuery<Row[]>,
  batchSize: number,
): AsyncGenerator<R[]> {
  // The values' text must be the shortest that reads back as the same double: PostgreSQL's default
  // since 12 (extra_float_digits = 1), but a server, database or role setting of 0 or less would round
  // it. Sent with the DECLARE, which postgres.js pipelines: no extra round trip.
  await Promise.all([
    tx`set local extra_float_digits = 1`,
    tx`declare series_cursor no scroll cursor for ${select}`,
  ]);
  const text = `fetch forward ${Math.trunc(batchSize)} from series_cursor`;
  const fetch = () => {
    const rows = tx.unsafe<R[]>(text, [], { prepare: true }).execute();
    // Handled here too: when the caller stops early, a FETCH sent ahead is never awaited.
    rows.catch(() => {});
    return rows;
  };
  const inFlight = [fetch()];
  while (true) {
    const rows = await inFlight.shift()!;
    const more = rows.length === batchSize;
    // Refilled before the caller gets this batch (FETCHES_IN_FLIGHT). Past the end a FETCH returns no rows.
    if (more) while (inFlight.length < FETCHES_IN_FLIGHT) inFlight.push(fetch());
    if (rows.length > 0) yield rows;
    if (!more) return;
  }
}

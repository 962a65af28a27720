/**
 * What an aggregated series computes per bucket, as SQL text for the row source: shared by every query
 * that aggregates (aggregateSelect in sql.ts, and the sync delta, src/sync/sql.ts), so a bucket
 * recomputed by a delta is the same doubles as the bucket of a whole response, on either storage.
 */
import { formatInstant, type Instant, microsBetween, parseInstant } from '../../domain/datetime.js';
import { instantLiteral, integerLiteral } from './literals.js';
import { measurementValue } from './measurementValue.js';

/**
 * The aggregates of a bucket's rows (observed_at, and `value`: an expression of their value) in the
 * columns of an aggregated batch: the mean, min and max (float8) and the count (int8). The mean sums in
 * time order: a float sum depends on its order, and a document must be the same bytes however the rows
 * happen to be stored or read (its ETag says so).
 */
const aggregatesOf = (value: string) =>
  `avg(${value} order by observed_at) as value, min(${value}) as min, max(${value}) as max, count(*) as count`;

/** The buckets of [from, to) (RFC 3339 UTC), `seconds` long, counted in whole strides from `from`. */
export function bucketsOf(from: string, to: string, seconds: number) {
  const start = instantLiteral(from);
  const end = instantLiteral(to);
  const stride = `make_interval(secs => ${integerLiteral(seconds)})`;
  const micros = integerLiteral(seconds * 1_000_000);
  // Microseconds from `from`, exact: an interval without months, and integer division.
  const offset = (instant: string) => `(extract(epoch from ${instant} - ${start}) * 1000000)::int8`;
  return {
    start,
    end,
    /** The aggregates over a select's rows that name their value `value`. */
    aggregates: aggregatesOf('value'),
    /** The bucket length (an interval). */
    stride,
    /** How many buckets start before `to` (int8). */
    count: `((${offset(end)} + ${micros} - 1) / ${micros})`,
    /** The number (int8, 0 first) of the bucket of `instant`, an expression not before `from`. */
    numberOf: (instant: string) => `(${offset(instant)} / ${micros})`,
    /** TimescaleDB's start of the bucket of `instant`: its planner can then read chunks in bucket order. */
    timeBucket: (instant: string) => `time_bucket(${stride}, ${instant}, origin => ${start})`,
    /**
     * Lateral joins that read bucket number `k` of tube `tubeId` (expressions) on its own, an index-only
     * scan of its range of the primary key, already in time order (the ordered mean needs no sort):
     * `bucket.start`, and `measured` with the aggregates (count 0 when the bucket is empty). Select
     * `columns` from them. `passes`: a condition on the measurements' columns (a status filter).
     * `window` (literals, [from, to) by default) holds every bucket read: the planner opens only its
     * chunks, those a document locked (chunkLocks.ts), where the bucket's bounds are known only per row.
     * Each bound stays plain, not least() of two: TimescaleDB turns each plain bound into one on a
     * compressed batch's first instant, and least() into none, so that every bucket would decompress
     * the tube's batches from its start to its chunk's end.
     */
    perBucket: (tubeId: string, k: string, passes?: string, window: Window = { from: start, to: end }) => `
      cross join lateral (select ${start} + ${k} * ${stride} as start) as bucket
      cross join lateral (
        select ${aggregatesOf(measurementValue())}
        from measurements
        where tube_id = ${tubeId}
          and observed_at >= bucket.start and observed_at < bucket.start + ${stride}
          and observed_at >= ${window.from} and observed_at < ${window.to}
          ${passes ? `and ${passes}` : ''}
      ) as measured`,
    columns: 'bucket.start as observed_at, measured.value, measured.min, measured.max, measured.count',
  };
}

/** The start of bucket `k` of buckets `seconds` long from `from`, as formatInstant writes it. */
export const bucketStart = (from: Instant, seconds: number, k: number) =>
  formatInstant({ seconds: from.seconds + k * seconds, micros: from.micros });

/** Instants [from, to): as RFC 3339 UTC text, or as the literals of a select's bounds. */
export interface Window {
  from: string;
  to: string;
}

/** Buckets `first` to `last` of [from, to) `seconds` long, as perBucket's window, which ends by `to`. */
export function bucketsWindow(
  from: string,
  to: string,
  seconds: number,
  first: number,
  last: number,
): Window {
  const start = parseInstant(from);
  const end = { seconds: start.seconds + (last + 1) * seconds, micros: start.micros };
  return {
    from: instantLiteral(bucketStart(start, seconds, first)),
    to: instantLiteral(microsBetween(end, parseInstant(to)) < 0 ? to : formatInstant(end)),
  };
}

/**
 * The buckets of [from, to) `seconds` long that hold instants of `span`, as perBucket's window; an empty
 * one without a span.
 */
export function bucketSpan(from: string, to: string, seconds: number, span: Window | undefined): Window {
  if (span === undefined) return { from: instantLiteral(to), to: instantLiteral(from) };
  const start = parseInstant(from);
  const number = (micros: number) => Math.floor(micros / (seconds * 1_000_000));
  return bucketsWindow(
    from,
    to,
    seconds,
    number(microsBetween(start, parseInstant(span.from))),
    number(microsBetween(start, parseInstant(span.to)) - 1),
  );
}

/**
 * What an aggregated series computes per bucket, shared by every query that aggregates (the series,
 * aggregateSelect in sql.ts, and the sync delta, src/v1/sync/sql.ts), so a bucket recomputed by a
 * delta is the same doubles as the bucket of a whole response. SQL text with literals, as every select
 * of the binary COPY row source (sql.ts).
 */
import { type Bucketing, instantLiteral, integerLiteral } from './sql.js';

/** The stride of `seconds` as an interval. */
export const strideOf = (seconds: number) => `make_interval(secs => ${integerLiteral(seconds)})`;

/** The start of the bucket of `instant` (an expression), counting strides from `origin`. */
export function bucketStart({ bucketFunction, seconds }: Bucketing, origin: string, instant: string): string {
  const stride = strideOf(seconds);
  return bucketFunction === 'time_bucket'
    ? `time_bucket(${stride}, ${instant}, origin => ${instantLiteral(origin)})`
    : `date_bin(${stride}, ${instant}, ${instantLiteral(origin)})`;
}

/**
 * The aggregates of a group of rows (observed_at, value), named as the columns of an aggregated batch:
 * the mean, min and max (float8) and the count (int8). The mean sums in time order: a float sum depends
 * on its order, and a representation must be the same bytes however the rows happen to be stored or
 * read (its ETag says so).
 */
export const BUCKET_AGGREGATES =
  'avg(value order by observed_at) as value, min(value) as min, max(value) as max, count(*) as count';

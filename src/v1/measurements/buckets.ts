/**
 * What an aggregated series computes per bucket, shared by every query that aggregates (the series,
 * aggregateSelect in sql.ts, and the sync delta, src/v1/sync/sql.ts), so a bucket recomputed by a
 * delta is the same doubles as the bucket of a whole response.
 */
import type { Fragment } from 'postgres';
import type { Queryable } from '../../db/connect.js';
import type { Bucketing } from './sql.js';

/** The start of the bucket of `instant` (an expression), counting strides from `origin`. */
export function bucketStart(
  sql: Queryable,
  { bucketFunction, seconds }: Bucketing,
  origin: string,
  instant: Fragment,
) {
  const stride = sql`make_interval(secs => ${seconds})`;
  return bucketFunction === 'time_bucket'
    ? sql`time_bucket(${stride}, ${instant}, origin => ${origin}::timestamptz)`
    : sql`date_bin(${stride}, ${instant}, ${origin}::timestamptz)`;
}

/**
 * The aggregates of a group of rows (observed_at, value): the mean, min and max (float8) and the count
 * (int8). The mean sums in time order: a float sum depends on its order, and a representation must be
 * the same bytes however the rows happen to be stored or read (its ETag says so).
 */
export const bucketAggregates = (sql: Queryable) => ({
  mean: sql`avg(value order by observed_at)`,
  min: sql`min(value)`,
  max: sql`max(value)`,
  count: sql`count(*)`,
});

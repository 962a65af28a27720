/**
 * The selects of measurements: one tube's series, its buckets, and many tubes' in one. They are read
 * as binary COPY output (binaryCopy.ts), and COPY takes no bind parameters, so a select carries its
 * values as literals (literals.ts).
 */

import { AGGREGATE_SECONDS, type Aggregate } from '../../contract.js';
import type { Queryable, Sql } from '../../db/connect.js';
import { usesTimescaleDb } from '../../db/migrate.js';
import type { BatchShape } from '../batch.js';
import { STATUSES } from '../schemas.js';
import { bucketsOf } from './buckets.js';
import { bucketsAreDays, dayRollupSelect, unsummedDays } from './dayRollups.js';
import { instantLiteral, int4ArrayLiteral, integerLiteral, statusCondition } from './literals.js';
import { measurementValue } from './measurementValue.js';

/**
 * Which tube a select reads and what it writes as its `tube`, as SQL expressions: for the series its
 * id and 0; for many tubes the columns of the list it walks (LISTED_TUBE).
 */
export interface TubeColumns {
  id: string;
  position: string;
}

const columnsOf = (tube: number | TubeColumns): TubeColumns =>
  typeof tube === 'number' ? { id: integerLiteral(tube), position: '0::int4' } : tube;

/**
 * The measurements of one tube in [from, to), oldest first, as the columns of a raw batch (tube 0 for
 * the series), with their status when asked, of the statuses asked. The primary key (tube_id,
 * observed_at) include (value, value_thousandths, status) answers it with an index-only scan, already
 * in order, the filter and the status included. Also run plainly and under EXPLAIN by the TimescaleDB
 * test.
 */
export function seriesSelect(
  tube: number | TubeColumns,
  from: string,
  to: string,
  { statuses, withStatus }: StatusRequest = {},
): string {
  const { id, position } = columnsOf(tube);
  const passes = statusCondition(statuses, STATUSES.length);
  return `select ${position} as tube, observed_at, ${measurementValue()} as value${withStatus ? ', status' : ''}
    from measurements
    where tube_id = ${id}
      and observed_at >= ${instantLiteral(from)} and observed_at < ${instantLiteral(to)}
      ${passes ? `and ${passes}` : ''}
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
  /** The bucket length (src/contract.ts, AGGREGATE_SECONDS). */
  seconds: number;
}

/** The tubes a select reads: one, by its id, or many, tube after tube in the list's order (acrossTubes). */
export type Tubes = number | readonly number[];

/** How each tube's select of `tubes` names its tube (a literal id, or the list's columns). */
const perTubeOf = (tubes: Tubes): TubeColumns => (typeof tubes === 'number' ? columnsOf(tubes) : LISTED_TUBE);

/** `perTube` (made with perTubeOf(tubes)) as the select of `tubes`. */
const selectOf = (tubes: Tubes, perTube: string) =>
  typeof tubes === 'number' ? perTube : acrossTubes(tubes, perTube);

/**
 * The buckets of the measurements of `tubes` in [from, to) of `statuses` (codes; undefined for every
 * status), oldest first, each starting `seconds` after the one before from `from` on, as the columns
 * of an aggregated batch (what a bucket computes: buckets.ts). A bucket without a measurement of
 * those statuses is left out. Read on `tx`, the document's snapshot, when its days need it.
 *
 * Buckets that are UTC days are read from the daily rollups (dayRollups.ts), on either storage.
 *
 * On plain PostgreSQL, which does not know that date_bin keeps the order of observed_at, grouping the
 * interval by bucket sorts every row of it. So each bucket is read on its own, from the stride number
 * k (perBucket). Empty buckets are read too (one index probe each) and left out.
 */
export async function aggregateSelect(
  tx: Queryable,
  tubes: Tubes,
  from: string,
  to: string,
  { bucketFunction, seconds }: Bucketing,
  statuses?: readonly number[],
): Promise<string> {
  const { id: tube, position } = perTubeOf(tubes);
  const passes = statusCondition(statuses, STATUSES.length);
  if (bucketsAreDays(from, seconds)) {
    const unsummed = await unsummedDays(tx, typeof tubes === 'number' ? [tubes] : tubes, from, to);
    return selectOf(tubes, dayRollupSelect(tube, position, from, to, statuses, passes, unsummed));
  }
  const buckets = bucketsOf(from, to, seconds);
  if (bucketFunction === 'time_bucket') {
    return selectOf(
      tubes,
      `select ${position} as tube, bucket as observed_at, ${buckets.aggregates}
      from (
        select ${buckets.timeBucket('observed_at')} as bucket, observed_at, ${measurementValue()} as value
        from measurements
        where tube_id = ${tube} and observed_at >= ${buckets.start} and observed_at < ${buckets.end}
          ${passes ? `and ${passes}` : ''}
      ) measured
      group by bucket
      order by bucket`,
    );
  }
  return selectOf(
    tubes,
    `select ${position} as tube, ${buckets.columns}
    from generate_series(0::int8, ${buckets.count} - 1) as k
    ${buckets.perBucket(tube, 'k', passes)}
    where measured.count > 0
    order by k`,
  );
}

/**
 * The columns a select returns: aggregated when it has min, max and count, rawWithStatus when each row
 * has its status (never aggregated: a bucket has no single status).
 */
export const shapeOf = (aggregate: unknown, withStatus?: boolean): BatchShape =>
  aggregate ? 'aggregated' : withStatus ? 'rawWithStatus' : 'raw';

/** The list's columns as each tube's select sees them (acrossTubes): its id, and its place from 0. */
export const LISTED_TUBE: TubeColumns = { id: 'listed.id', position: '(listed.position - 1)::int4' };

/**
 * The rows of `tubeIds`, tube after tube in the list's order, each by its own select (`perTube`, made
 * for LISTED_TUBE: the series' select or its buckets', measurements/sql.ts), so each tube is read as
 * the series endpoint reads it. A list WITH ORDINALITY is known to come in that order,
 * so the nested loop over it needs no sort; OFFSET 0 keeps each tube's select whole, ORDER BY included,
 * rather than merged into the join.
 */
export function acrossTubes(tubeIds: readonly number[], perTube: string): string {
  return `select measured.* from unnest(${int4ArrayLiteral(tubeIds)}) with ordinality as listed(id, position)
    cross join lateral (${perTube} offset 0) as measured
    order by listed.position`;
}

/**
 * The rows of `selects` (each whole, ORDER BY included), one select after another. Each is a branch of a
 * lateral union gated by its place in a list WITH ORDINALITY, so the nested loop runs each branch once,
 * in the list's order, with no sort; and each keeps its own literal bounds, so the planner opens only the
 * chunks each reads (decisions/0114), where acrossTubes' one select for every tube opens them all.
 */
export function oneAfterAnother(selects: readonly string[]): string {
  const branches = selects.map(
    (select, k) =>
      `(select * from (${select} offset 0) as part where listed.position = ${integerLiteral(k + 1)})`,
  );
  return `select measured.* from generate_series(1, ${integerLiteral(selects.length)}) with ordinality as listed(n, position)
    cross join lateral (${branches.join(' union all ')}) as measured
    order by listed.position`;
}

/** What a client asks of a tube's measurements: RFC 3339 UTC `Z` forms of [from, to), and the buckets. */
export interface Interval {
  from: string;
  to: string;
  /** The bucket length asked for; undefined for every measurement. */
  aggregate?: Aggregate | undefined;
}

/**
 * What a client asks of the statuses of a tube's measurements: the filter, and whether each row
 * carries its status (the raw selects' fourth column, `status` int2).
 */
export interface StatusRequest {
  /** Only rows with one of these status codes (ascending); undefined for every status, no filter. */
  statuses?: readonly number[] | undefined;
  /** Whether the select returns each row's status after its value. */
  withStatus?: boolean | undefined;
}

/** How `aggregate` cuts a series on the database behind `pool`; undefined for every measurement. */
export async function bucketingOf(
  pool: Sql,
  tx: Queryable,
  aggregate: Aggregate | undefined,
): Promise<Bucketing | undefined> {
  return (
    aggregate && { bucketFunction: await bucketFunctionOf(pool, tx), seconds: AGGREGATE_SECONDS[aggregate] }
  );
}

/** The select of the series of `tubes`, or of their buckets, read on `tx` (of `pool`). */
export async function measurementsSelect(
  pool: Sql,
  tx: Queryable,
  tubes: Tubes,
  { from, to, aggregate, ...status }: Interval & StatusRequest,
): Promise<string> {
  const bucketing = await bucketingOf(pool, tx, aggregate);
  if (bucketing && status.withStatus) throw new Error('a bucket has no single status');
  return bucketing
    ? aggregateSelect(tx, tubes, from, to, bucketing, status.statuses)
    : selectOf(tubes, seriesSelect(perTubeOf(tubes), from, to, status));
}

/**
 * The database half of sync tokens (token.ts): the sync point of a response, whether the changes since
 * a token can still be told (410 when not), and the delta itself, read from the change log of sql/006.
 *
 * Why a delta is exact: an import records what it wrote (tube and a run of instants) in its own
 * transaction, under its xid (src/importers/measurements/changeLog.ts). A token holds the snapshot its
 * response was read from. The delta reads the change rows whose transaction that snapshot did not see
 * (pg_visible_in_snapshot), and the current snapshot's own visibility keeps out those not yet committed:
 * so it holds what was written between the two snapshots, whatever order imports started and committed
 * in. A transaction the token did not see has an xid >= its xmin, so the xid index bounds the scan.
 */
import type { Queryable } from '../../db/connect.js';
import { BUCKET_AGGREGATES, bucketStart, strideOf } from '../measurements/buckets.js';
import { type Bucketing, instantLiteral, integerLiteral } from '../measurements/sql.js';
import { type SyncPoint, VIEW_BYTES } from './token.js';

/** The HMAC key of the tokens (made by the migration); read once when the service starts. */
export async function loadSyncSecret(sql: Queryable): Promise<Buffer> {
  const [row] = await sql<{ secret: Buffer }[]>`select secret from sync_state`;
  if (!row) throw new Error('sync_state has no secret: run `gwapi migrate`');
  return row.secret;
}

/** What the key may read: the client's all-tubes flag and grants (src/keys/clients.ts). */
export interface SyncViewer {
  allTubes: boolean;
  grants: ReadonlySet<number>;
}

/**
 * The sync point of the response being read: pg_current_snapshot() and the fingerprint of the key's
 * view, one round trip. Call it inside the response's REPEATABLE READ READ ONLY transaction (any
 * statement of it: they all share the transaction's snapshot), so it is the snapshot the response is
 * read from. Issue the token from it (issueSyncToken) for the response's `Sync-Token`.
 *
 * The view is everything that changes what the key's copy of its data holds besides measurements:
 * which tubes it may read (grants, all-tubes flag, as `viewer` has them for this response), and for each
 * its identifier, number, unit and vertical datum, and its well's name, read in the same snapshot.
 */
export async function currentSyncPoint(tx: Queryable, viewer: SyncViewer): Promise<SyncPoint> {
  const [row] = await tx<{ snapshot: string; view: Buffer }[]>`
    select pg_current_snapshot()::text as snapshot, (
      select substring(sha256(convert_to(coalesce(
               string_agg(row(t.identifier, t.number, t.unit, t.vertical_datum, w.name)::text, ',' order by t.id),
               ''), 'UTF8')) from 1 for ${VIEW_BYTES})
      from tubes t join wells w on w.id = t.well_id
      where ${viewer.allTubes} or t.id = any(${[...viewer.grants]}::int[])
    ) as view`;
  const [xmin, xmax, xip] = row!.snapshot.split(':') as [string, string, string];
  return {
    xmin: BigInt(xmin),
    xmax: BigInt(xmax),
    xip: xip === '' ? [] : xip.split(',').map(BigInt),
    view: row!.view,
  };
}

/**
 * Whether the changes since `since` cannot be told as measurements (410): the key's view changed; the
 * change history the token needs has been pruned (SYNC_HISTORY_DAYS); or the token's snapshot is ahead
 * of this database's (restored from an earlier backup, or a replica behind the one that answered
 * before), where transactions it counted as seen may still be to come. `now` is currentSyncPoint of
 * this response, `tx` its transaction.
 */
export async function syncGone(tx: Queryable, since: SyncPoint, now: SyncPoint): Promise<boolean> {
  if (!since.view.equals(now.view) || since.xmax > now.xmax) return true;
  const [row] = await tx<{ prunedThrough: string }[]>`
    select pruned_through::text as "prunedThrough" from sync_state`;
  // Every pruned transaction must have been seen by the token: below its xmin, all ended ones were.
  return BigInt(row?.prunedThrough ?? 0) >= since.xmin;
}

export interface ChangedMeasurements {
  /** The response's tubes (internal ids) in response order; `tube` in the output is a position here. */
  tubeIds: readonly number[];
  /** RFC 3339: the interval [from, to). */
  from: string;
  to: string;
  /** The token's sync point (readSyncToken), not gone (syncGone). */
  since: SyncPoint;
  /** Buckets instead of measurements: bucketFunctionOf and the stride, as for the series. */
  aggregate?: Bucketing | undefined;
}

/**
 * The delta since a token, as one select for the response's row source: in the current transaction's
 * snapshot, the measurements of `tubeIds` in [from, to) that were inserted or given another value by
 * transactions `since` did not see. Each once, in the columns of every measurements query:
 * `tube int4` (position in `tubeIds`, 0-based), `observed_at timestamptz`, `value float8`, ordered by
 * tube then time. Tubes without such a measurement have no row.
 *
 * With `aggregate`: every bucket (origin `from`, as the series) that holds such a measurement,
 * recomputed over all of the bucket's measurements in [from, to), as `tube`, `observed_at` (the
 * bucket's start), `value` (the mean), `min`, `max` (float8), `count` (int8); the same numbers as the
 * bucket in a whole response (measurements/buckets.ts).
 */
export function changedMeasurementsSelect(request: ChangedMeasurements): string {
  const { tubeIds, from, to, aggregate } = request;
  const tubes = `(select id, n from unnest(${tubeList(tubeIds)}) with ordinality l (id, n) order by n) l`;
  const changed = changedRanges(request);
  if (!aggregate) {
    return `
      with changes as (${changed})
      select (l.n - 1)::int4 as tube, m.observed_at, m.value
      from ${tubes}
      join changes c on c.tube_id = l.id
      cross join lateral unnest(c.ranges) r (range)
      cross join lateral (${measuredIn('r.range')}) m
      order by l.n, m.observed_at`;
  }
  const bucket = (instant: string) => bucketStart(aggregate, from, instant);
  // A range's bounds are written instants (changeLog.ts), so each bucket from the first's to the last's
  // holds a changed measurement or none at all: the buckets to recompute are these whole extents.
  return `
    with changes as (${changed}),
    extents as (
      select c.tube_id,
             range_agg(tstzrange(${bucket('lower(r.range)')},
                                 ${bucket('upper(r.range)')} + ${strideOf(aggregate.seconds)}, '[)'))
               * ${interval(from, to)} as extents
      from changes c cross join lateral unnest(c.ranges) r (range)
      group by c.tube_id
    )
    select (n - 1)::int4 as tube, bucket as observed_at, ${BUCKET_AGGREGATES}
    from (
      select l.n, ${bucket('m.observed_at')} as bucket, m.observed_at, m.value
      from ${tubes}
      join extents e on e.tube_id = l.id
      cross join lateral unnest(e.extents) x (range)
      cross join lateral (${measuredIn('x.range')}) m
    ) measured
    group by n, bucket
    order by n, bucket`;
}

/** The tube ids as an int[] literal. */
const tubeList = (tubeIds: readonly number[]) => `'{${tubeIds.map(integerLiteral).join(',')}}'::int[]`;

/** [from, to) as a one-range multirange. */
const interval = (from: string, to: string) =>
  `tstzmultirange(tstzrange(${instantLiteral(from)}, ${instantLiteral(to)}, '[)'))`;

/**
 * The measurements of tube `l.id` within `range` (a tstzrange of the query), by the primary key. OFFSET 0
 * keeps it a scan of its own, run for each range with the range's bounds: pulled up into the join, the
 * planner may read the tube's whole series and filter it; and on a hypertable TimescaleDB excludes the
 * chunks outside each range at run time only in such a scan.
 */
const measuredIn = (range: string) => `
  select m.observed_at, m.value from measurements m
  where m.tube_id = l.id and m.observed_at >= lower(${range}) and m.observed_at <= upper(${range})
    and m.observed_at <@ ${range}
  offset 0`;

/** Transaction ids as the digits a snapshot's text and an xid8 literal hold. */
const xidText = (xids: readonly bigint[]) =>
  xids
    .map((xid) => {
      if (xid < 0n) throw new Error(`not a transaction id: ${xid}`);
      return String(xid);
    })
    .join(',');

/**
 * Per tube of the request, the instants changed since the token within [from, to), as one multirange:
 * range_agg merges overlapping runs (a row written again by a later import), so no row comes twice.
 */
function changedRanges({ tubeIds, from, to, since }: ChangedMeasurements): string {
  const snapshot = `'${xidText([since.xmin])}:${xidText([since.xmax])}:${xidText(since.xip)}'::pg_snapshot`;
  return `
    select c.tube_id,
           range_agg(tstzrange(c.first_at, c.last_at, '[]')) * ${interval(from, to)} as ranges
    from measurement_changes c
    where c.xid >= '${xidText([since.xmin])}'::xid8
      and not pg_visible_in_snapshot(c.xid, ${snapshot})
      and c.tube_id = any(${tubeList(tubeIds)})
      and c.first_at < ${instantLiteral(to)} and c.last_at >= ${instantLiteral(from)}
    group by c.tube_id`;
}

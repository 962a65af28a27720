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
import type { Queryable } from '../db/connect.js';
import { bucketsOf } from '../engine/read/buckets.js';
import { instantLiteral, int4ArrayLiteral } from '../engine/read/literals.js';
import type { Bucketing } from '../engine/read/selects.js';
import { snapshotLiteral, xid8Literal } from './literals.js';
import { type SyncPoint, seesAllOf, VIEW_BYTES } from './token.js';

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
 * of this database's (restored from an earlier backup), where transactions it counted as seen may still
 * be to come. A read replica behind the token is no such case: the route asks another source
 * (src/v1/network/plan.ts) before it asks this. `now` is currentSyncPoint of
 * this response, `tx` its transaction.
 */
export async function syncGone(tx: Queryable, since: SyncPoint, now: SyncPoint): Promise<boolean> {
  if (!since.view.equals(now.view) || !seesAllOf(now, since)) return true;
  const [row] = await tx<{ prunedThrough: string }[]>`
    select pruned_through::text as "prunedThrough" from sync_state`;
  // Every pruned transaction must have been seen by the token: below its xmin, all ended ones were.
  return BigInt(row?.prunedThrough ?? 0) >= since.xmin;
}

export interface ChangedMeasurements {
  /** The response's tubes (internal ids) in response order; `tube` in the output is a position here. */
  tubeIds: readonly number[];
  /** RFC 3339 UTC (formatInstant's text): the interval [from, to). */
  from: string;
  to: string;
  /** The token's sync point (readSyncToken), not gone (syncGone). */
  since: SyncPoint;
  /** Buckets instead of measurements, of `seconds` each (a series' Bucketing will do). */
  aggregate?: Pick<Bucketing, 'seconds'> | undefined;
}

/**
 * The delta since a token, as the text of one select for the response's row source (measurementBatches,
 * shapeOf(aggregate); its values are literals, as COPY takes no parameters): in the current transaction's
 * snapshot, the measurements of `tubeIds` in [from, to) that were inserted or given another value by
 * transactions `since` did not see. Each once, in the columns of every measurements query:
 * `tube int4` (position in `tubeIds`, 0-based), `observed_at timestamptz`, `value float8`, ordered by
 * tube then time. Tubes without such a measurement have no row.
 *
 * With `aggregate`: every bucket (origin `from`, as the series) that holds such a measurement,
 * recomputed over all of the bucket's measurements in [from, to), as `tube`, `observed_at` (the
 * bucket's start), `value` (the mean), `min`, `max` (float8), `count` (int8); the same numbers as the
 * bucket in a whole response (measurements/buckets.ts). Each touched bucket is read on its own
 * (perBucket), on either storage: only those are recomputed.
 */
export function changedMeasurementsSelect(request: ChangedMeasurements): string {
  const { tubeIds, from, to, aggregate } = request;
  const tubes = `(select id, n from unnest(${int4ArrayLiteral(tubeIds)}) with ordinality l (id, n)) l`;
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
  const buckets = bucketsOf(from, to, aggregate.seconds);
  // A range's bounds are written instants (changeLog.ts), so each bucket from the first's to the last's
  // holds a changed measurement or none at all: these are the buckets to recompute, each on its own.
  return `
    with changes as (${changed}),
    touched as (
      select distinct c.tube_id, k
      from changes c
      cross join lateral unnest(c.ranges) r (range)
      cross join lateral generate_series(${buckets.numberOf('lower(r.range)')},
                                         least(${buckets.numberOf('upper(r.range)')}, ${buckets.count} - 1)) k
    )
    select (l.n - 1)::int4 as tube, ${buckets.columns}
    from ${tubes}
    join touched t on t.tube_id = l.id
    ${buckets.perBucket('l.id', 't.k')}
    where measured.count > 0
    order by l.n, t.k`;
}

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

/**
 * Per tube of the request, the instants changed since the token within [from, to), as one multirange:
 * range_agg merges overlapping runs (a row written again by a later import), so no row comes twice.
 */
function changedRanges({ tubeIds, from, to, since }: ChangedMeasurements): string {
  const start = instantLiteral(from);
  const end = instantLiteral(to);
  return `
    select c.tube_id,
           range_agg(tstzrange(c.first_at, c.last_at, '[]'))
             * tstzmultirange(tstzrange(${start}, ${end}, '[)')) as ranges
    from measurement_changes c
    where c.xid >= ${xid8Literal(since.xmin)}
      and not pg_visible_in_snapshot(c.xid, ${snapshotLiteral(since)})
      and c.tube_id = any(${int4ArrayLiteral(tubeIds)})
      and c.first_at < ${end} and c.last_at >= ${start}
    group by c.tube_id`;
}

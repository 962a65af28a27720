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
import {
  type HistoryPlace,
  placeOn,
  placeOnHistory,
  type TimelineHistory,
  timelineHistories,
  WAL_PLACE_COLUMNS,
  walPlaceOf,
} from '../db/walHistory.js';
import { bucketSpan, bucketsOf, type Window } from '../engine/read/buckets.js';
import { bucketsAreDays, daysOf, rollupSummarises, rollupUnsummed } from '../engine/read/dayRollups.js';
import {
  instantLiteral,
  int4ArrayLiteral,
  integerLiteral,
  statusCondition,
} from '../engine/read/literals.js';
import { measurementValue } from '../engine/read/measurementValue.js';
import type { Bucketing, StatusRequest } from '../engine/read/selects.js';
import { STATUSES } from '../engine/schemas.js';
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

/** A sync point as read now, with the history of the database it was read on (syncGone asks it). */
export interface CurrentPoint extends SyncPoint {
  place: HistoryPlace;
  history: TimelineHistory;
}

/**
 * The sync point of the response being read: pg_current_snapshot(), the fingerprint of the key's
 * view and the server's place in its WAL history, one round trip (and, the first time a process meets a
 * timeline, one more for its history). Call it inside the response's REPEATABLE READ READ ONLY
 * transaction (any statement of it: they all share the transaction's snapshot), so it is the snapshot
 * the response is read from. Issue the token from it (issueSyncToken) for the response's `Sync-Token`.
 *
 * The view is everything that changes what the key's copy of its data holds besides measurements:
 * which tubes it may read (grants, all-tubes flag, as `viewer` has them for this response), and for each
 * its identifier, number, unit and vertical datum, and its well's name, read in the same snapshot.
 */
export async function currentSyncPoint(tx: Queryable, viewer: SyncViewer): Promise<CurrentPoint> {
  const [row] = await tx<{ snapshot: string; view: Buffer; walPlace: string }[]>`
    select pg_current_snapshot()::text as snapshot, (
      select substring(sha256(convert_to(coalesce(
               string_agg(row(t.identifier, t.number, t.unit, t.vertical_datum, w.name)::text, ',' order by t.id),
               ''), 'UTF8')) from 1 for ${VIEW_BYTES})
      from tubes t join wells w on w.id = t.well_id
      where ${viewer.allTubes} or t.id = any(${[...viewer.grants]}::int[])
    ) as view, ${tx.unsafe(WAL_PLACE_COLUMNS)}`;
  const [xmin, xmax, xip] = row!.snapshot.split(':') as [string, string, string];
  const walPlace = walPlaceOf(row!.walPlace);
  const history = await timelineHistories.of(tx, walPlace);
  return {
    xmin: BigInt(xmin),
    xmax: BigInt(xmax),
    xip: xip === '' ? [] : xip.split(',').map(BigInt),
    view: row!.view,
    place: placeOn(history, walPlace.lsn),
    history,
  };
}

/**
 * Whether the changes since `since` cannot be told as measurements (410): the token was read on a
 * history this database does not hold (it was restored to a point before the token, or the token's
 * transactions were lost in a failover), or from before tokens kept their place; the key's view changed;
 * the change history the token needs has been pruned (SYNC_HISTORY_DAYS); or the token's snapshot is
 * ahead of this database's. A read replica behind the token is no such case: the route asks another
 * source (src/v1/network/plan.ts) before it asks this. `now` is currentSyncPoint of this response, `tx`
 * its transaction.
 */
export async function syncGone(tx: Queryable, since: SyncPoint, now: CurrentPoint): Promise<boolean> {
  if (!since.place || placeOnHistory(now.history, since.place) !== 'on') return true;
  if (!since.view.equals(now.view) || !seesAllOf(now, since)) return true;
  const [row] = await tx<{ prunedThrough: string }[]>`
    select pruned_through::text as "prunedThrough" from sync_state`;
  // Every pruned transaction must have been seen by the token: below its xmin, all ended ones were.
  return BigInt(row?.prunedThrough ?? 0) >= since.xmin;
}

/** `withStatus` (include=status) is also what lets a delta write a removal. */
export interface ChangedMeasurements extends StatusRequest {
  /** The response's tubes (internal ids) in response order; `tube` in the output is a position here. */
  tubeIds: readonly number[];
  /** RFC 3339 UTC (formatInstant's text): the interval [from, to). */
  from: string;
  to: string;
  /** The token's sync point (readSyncToken), not gone (syncGone). */
  since: SyncPoint;
  /** Buckets instead of measurements, of `seconds` each (a series' Bucketing will do). */
  aggregate?: Pick<Bucketing, 'seconds'> | undefined;
  /**
   * What the change log holds since the token for the request (deltaContents): a delta reads only the
   * parts it needs. Undefined counts as everything.
   */
  contents?: DeltaContents | undefined;
}

/** What transactions a token did not see wrote in a delta's tubes and interval (deltaContents). */
export interface DeltaContents {
  /** A measurement was corrected: given another value or status, or removed. */
  corrected: boolean;
  /** A run of inserted measurements overlaps the interval. */
  inserted: boolean;
  /**
   * A correction left a measurement outside the request's filter (removed it, or gave it a status the
   * filter does not pass). Without one the delta holds no removal and empties no bucket: a measurement
   * leaves the client's view only through such a correction, its last since the token.
   */
  leaving: boolean;
  /** The tube of every correction, when they are all of one (a status change of one tube, say). */
  correctedTube: number | undefined;
  /**
   * The instants of the interval that the changes hold, [from, to) in RFC 3339 UTC: the measurements a
   * delta reads lie in it, and so do the chunks its select plans. None when nothing changed.
   */
  span: Window | undefined;
}

/**
 * What the change log holds since the token for the request's tubes and interval, in one round trip of
 * the response's snapshot: it reads the corrections since the token once, and the runs until one.
 */
export async function deltaContents(tx: Queryable, request: ChangedMeasurements): Promise<DeltaContents> {
  const utc = (instant: string) =>
    `to_char((${instant}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  const [row] = await tx.unsafe<
    {
      corrected: boolean;
      leaving: boolean;
      tube: number | null;
      inserted: boolean;
      first: string | null;
      end: string | null;
    }[]
  >(`
    with corrections as (
      select count(*) > 0 as corrected,
             coalesce(bool_or(not (${statusPasses('k.status_after', request.statuses)})), false) as leaving,
             case when min(k.tube_id) = max(k.tube_id) then min(k.tube_id) end as tube,
             min(k.observed_at) as first, max(k.observed_at) as last
      from measurement_corrections k where ${correctionsOf(request)}
    ),
    runs as (
      select min(greatest(c.first_at, ${instantLiteral(request.from)})) as first,
             max(least(c.last_at, ${instantLiteral(request.to)})) as last
      from measurement_changes c where ${insertedRunsOf(request)}
    )
    select k.corrected, k.leaving, k.tube, r.first is not null as inserted,
           ${utc('least(k.first, r.first)')} as first,
           ${utc("greatest(k.last, r.last) + interval '1 microsecond'")} as "end"
    from corrections k, runs r`);
  const { corrected, leaving, inserted, tube, first, end } = row!;
  return {
    corrected,
    leaving,
    inserted,
    correctedTube: tube ?? undefined,
    span: first === null || end === null ? undefined : { from: first, to: end },
  };
}

/**
 * The delta as the network route reads it: the text of its select (changedMeasurementsSelect), or
 * undefined when it cannot be told as rows the client can apply (410, deltaRefusal). In the response's
 * snapshot, before its first byte.
 */
export async function deltaSelect(tx: Queryable, request: ChangedMeasurements): Promise<string | undefined> {
  const read = { ...request, contents: await deltaContents(tx, request) };
  return (await deltaRefusal(tx, read)) ? undefined : changedMeasurementsSelect(read);
}

/** The rows of `table` (a change table's alias) that transactions the token did not see wrote. */
const unseenBy = ({ since, tubeIds }: ChangedMeasurements, table: string) =>
  `${table}.xid >= ${xid8Literal(since.xmin)} and not pg_visible_in_snapshot(${table}.xid, ${snapshotLiteral(since)})
   and ${table}.tube_id = any(${int4ArrayLiteral(tubeIds)})`;

/** The corrections (alias k) since the token of the request's tubes, in its interval. */
const correctionsOf = (request: ChangedMeasurements) =>
  `${unseenBy(request, 'k')}
   and k.observed_at >= ${instantLiteral(request.from)} and k.observed_at < ${instantLiteral(request.to)}`;

/** The runs of inserted measurements (alias c) since the token of the request's tubes, overlapping its interval. */
const insertedRunsOf = (request: ChangedMeasurements) =>
  `${unseenBy(request, 'c')} and not c.corrected
   and c.first_at < ${instantLiteral(request.to)} and c.last_at >= ${instantLiteral(request.from)}`;

/** The CTE `listed` (id, tube): the request's tubes with their positions. */
const listedTubes = ({ tubeIds }: ChangedMeasurements) =>
  `listed as (select id, (n - 1)::int4 as tube from unnest(${int4ArrayLiteral(tubeIds)}) with ordinality l (id, n))`;

/** The code a delta writes as the status of a measurement that left the client's view. */
export const REMOVED_CODE = STATUSES.length;

/**
 * The delta since a token, as the text of one select for the response's row source (its values are
 * literals, as COPY takes no parameters): in the current transaction's snapshot, for the tubes `tubeIds`
 * in [from, to), every measurement inserted, given another value or status, or removed by transactions
 * `since` did not see, in the columns of every measurements query: `tube int4` (position in `tubeIds`,
 * 0-based), `observed_at timestamptz`, `value float8`, and with `withStatus` `status int2`; ordered by
 * tube then time, each once. A measurement that passes the filter now comes with its value; one that
 * passed it in the token's snapshot and no longer does (removed, or given a status the filter does not
 * pass) is a removal: with its last value and REMOVED_CODE. Without `withStatus` a removal cannot be
 * written, and deltaRefusal has answered 410 before this is read.
 *
 * With `aggregate`: every bucket (origin `from`, as the series) that holds such a measurement or
 * removal, recomputed over the bucket's measurements in [from, to) that pass the filter, as `tube`,
 * `observed_at` (the bucket's start), `value` (the mean), `min`, `max` (float8), `count` (int8); the
 * same numbers as the bucket in a whole response (buckets.ts). A touched bucket left empty makes the
 * delta 410 (deltaRefusal).
 */
export function changedMeasurementsSelect(request: ChangedMeasurements): string {
  const { aggregate } = request;
  if (!aggregate) {
    // Of one tube's corrections alone, by time: the tube is one constant, which the planner cannot see
    // through the corrections' DISTINCT ON, and would sort by again.
    const contents = request.contents;
    const order =
      contents?.inserted === false && contents.correctedTube !== undefined
        ? 'observed_at'
        : 'tube, observed_at';
    return `
      ${deltaRows(request)}
      select tube, observed_at, value${request.withStatus ? ', status' : ''}
      from delta order by ${order}`;
  }
  const buckets = bucketsOf(request.from, request.to, aggregate.seconds);
  if (!bucketsAreDays(request.from, aggregate.seconds)) {
    return `
    ${touchedBuckets(request, aggregate.seconds)}
    select t.tube, ${buckets.columns}
    from touched t
    ${perBucketOf(request, aggregate.seconds)}
    where measured.count > 0
    order by t.tube, t.k`;
  }
  // UTC days, as a whole response reads them (dayRollups.ts): each from its rollup, computed only
  // where the rollups cannot give it.
  const { wholeDays } = daysOf(request.from, request.to);
  const day = `${buckets.start} + t.k * ${buckets.stride}`;
  return `
    ${touchedBuckets(request, aggregate.seconds)}
    select tube, observed_at, value, min, max, count from (
      select t.tube, t.k, rollup.day as observed_at, rollup.mean as value, rollup.min, rollup.max, rollup.count
      from touched t
      join measurement_day_rollups rollup on rollup.tube_id = t.tube_id and rollup.day = ${day}
        and ${rollupSummarises('rollup', request.statuses)}
      where t.k < ${integerLiteral(wholeDays)}
      union all
      select t.tube, t.k, ${buckets.columns}
      from touched t
      ${perBucketOf(request, aggregate.seconds)}
      where measured.count > 0
        and (t.k >= ${integerLiteral(wholeDays)} or exists (
          select from measurement_day_rollups unsummed
          where unsummed.tube_id = t.tube_id and unsummed.day = ${day} and ${rollupUnsummed('unsummed')}))
    ) as buckets
    order by tube, k`;
}

/**
 * Whether the delta cannot be told as rows the client can apply (410): it holds a removal but the
 * request has no include=status to write one with, or (aggregated) a bucket it touched holds no
 * measurement any more. Read in the response's snapshot, before its first byte.
 */
export async function deltaRefusal(tx: Queryable, request: ChangedMeasurements): Promise<boolean> {
  const { aggregate } = request;
  if (request.contents?.leaving === false) return false;
  const query = aggregate
    ? `${touchedBuckets(request, aggregate.seconds)}
       select exists (select from touched t ${perBucketOf(request, aggregate.seconds)} where measured.count = 0)
         as refused`
    : request.withStatus
      ? undefined
      : `${deltaRows(request)} select exists (select from delta where status = ${REMOVED_CODE}) as refused`;
  if (!query) return false;
  const [row] = await tx.unsafe<{ refused: boolean }[]>(query);
  return row?.refused ?? false;
}

/** Whether `column` holds a status the filter passes; false, never null, where it holds none (removed). */
function statusPasses(column: string, statuses: readonly number[] | undefined): string {
  const condition =
    statuses?.length === STATUSES.length ? undefined : statusCondition(statuses, STATUSES.length, column);
  return condition === undefined ? `${column} is not null` : `coalesce(${condition}, false)`;
}

/** The buckets (tube position, stride number k) that a delta's rows fall in: `touched`. */
function touchedBuckets(request: ChangedMeasurements, seconds: number): string {
  const buckets = bucketsOf(request.from, request.to, seconds);
  return `
    ${deltaRows(request)},
    touched as (select distinct tube, tube_id, ${buckets.numberOf('observed_at')} as k from delta)`;
}

/**
 * The recomputed bucket `t.k` of tube `t.tube_id` over the measurements that pass the filter, within the
 * buckets that the changes' span touches (changedSpan).
 */
function perBucketOf(request: ChangedMeasurements, seconds: number): string {
  const { from, to, contents } = request;
  const buckets = bucketsOf(from, to, seconds);
  const touched = contents === undefined ? undefined : bucketSpan(from, to, seconds, contents.span);
  return buckets.perBucket('t.tube_id', 't.k', statusCondition(request.statuses, STATUSES.length), touched);
}

/**
 * The CTE `delta` (tube, tube_id, observed_at, value, status): what changed since the token, one row per
 * measurement, status REMOVED_CODE for a removal.
 *
 * Where it comes from: every writer records, under its transaction's xid and with its change order
 * (sql/009), the runs of instants it inserted (measurement_changes) and each measurement it corrected,
 * with the version before and after (measurement_corrections). A measurement inserted since the token
 * lies in a run the token did not see, and is read from the table; a corrected one is read from the
 * corrections, its last version after being its current one.
 *
 * What the token's snapshot held of a corrected measurement: the version before its first correction
 * since, unless it was inserted after the token and before that correction, which a run the token did
 * not see, of a lower change order, covering it tells. Runs written before 1.3 carry no change order
 * and never count as that insert: a doubt becomes a removal, which is harmless.
 */
function deltaRows(request: ChangedMeasurements): string {
  const { from, to, statuses } = request;
  const start = instantLiteral(from);
  const end = instantLiteral(to);
  const unseen = (table: string) => unseenBy(request, table);
  const passes = (column: string) => statusPasses(column, statuses);
  const insertedRows = `    with ${listedTubes(request)},
    runs as (
      select c.tube_id,
             range_agg(tstzrange(c.first_at, c.last_at, '[]'))
               * tstzmultirange(tstzrange(${start}, ${end}, '[)')) as ranges
      from measurement_changes c
      where ${insertedRunsOf(request)}
      group by c.tube_id
    ),
    inserted as (
      select c.tube_id, m.observed_at, m.value, m.status
      from runs c
      cross join lateral unnest(c.ranges) r (range)
      cross join lateral (${measuredIn('c.tube_id', 'r.range', changedSpan(request))}) m
    ),
`;
  const contents = request.contents;
  if (contents?.inserted === false) return correctionsOnly(request);
  if (contents?.corrected === false) {
    return `${insertedRows}
    delta as (
      select l.tube, l.id as tube_id, n.observed_at, n.value, n.status
      from inserted n join listed l on l.id = n.tube_id
      where ${passes('n.status')}
    )`;
  }
  return `${insertedRows}
    corrections as materialized (
      select k.tube_id, k.observed_at, k.change_order, k.status_before, k.value_before, k.value_after, k.status_after
      from measurement_corrections k
      where ${correctionsOf(request)}
    ),
    -- A corrected measurement now: as the table has it when a run since inserted it again, else its
    -- last version after (none: removed; then its value is the one it had).
    latest as (
      select distinct on (tube_id, observed_at) tube_id, observed_at, value_after, status_after, value_before
      from corrections order by tube_id, observed_at, change_order desc
    ),
    corrected as not materialized (
      select c.tube_id, c.observed_at, coalesce(n.value, c.value_after, c.value_before) as value,
             case when n.tube_id is null then c.status_after else n.status end as status
      from latest c
      left join inserted n on n.tube_id = c.tube_id and n.observed_at = c.observed_at
    ),
    -- Those the filter does not pass now, with what the token's snapshot held of them: the version
    -- before their first correction since.
    leaving as (
      select distinct on (k.tube_id, k.observed_at) k.tube_id, k.observed_at, k.status_before, k.change_order,
             c.value
      from corrected c
      join corrections k on k.tube_id = c.tube_id and k.observed_at = c.observed_at
      where not ${passes('c.status')}
      order by k.tube_id, k.observed_at, k.change_order
    ),
    delta as (
      select l.tube, l.id as tube_id, d.observed_at, d.value, d.status
      from (
        select tube_id, observed_at, value, status from corrected where ${passes('status')}
        union all
        select n.tube_id, n.observed_at, n.value, n.status
        from inserted n
        where ${passes('n.status')}
          and not exists (select from latest c where c.tube_id = n.tube_id and c.observed_at = n.observed_at)
        union all
        select tube_id, observed_at, value, ${REMOVED_CODE}::int2
        from leaving w
        where ${passes('w.status_before')} and not exists (
                select from measurement_changes c
                where ${unseen('c')} and not c.corrected and c.tube_id = w.tube_id
                  and w.observed_at between c.first_at and c.last_at and c.change_order < w.change_order)
      ) d
      join listed l on l.id = d.tube_id
    )`;
}

/**
 * deltaRows when no run of inserted measurements overlaps the request: a corrected measurement is now
 * as its last correction left it, and what the token's snapshot held of it is the version before its
 * first. Read in one sort of the corrections, in the delta's order (of one tube's, by time alone); the
 * first versions only for a measurement that does not pass the filter now, which a removal is, and not
 * at all when no correction left the filter.
 */
function correctionsOnly(request: ChangedMeasurements): string {
  const passes = (column: string) => statusPasses(column, request.statuses);
  const { leaving, correctedTube } = request.contents ?? {};
  const [position, corrections, instant] =
    correctedTube === undefined
      ? [
          'l.tube',
          `measurement_corrections k join listed l on l.id = k.tube_id where ${correctionsOf(request)}`,
          'l.tube, k.observed_at',
        ]
      : [
          `${integerLiteral(request.tubeIds.indexOf(correctedTube))}::int4`,
          `measurement_corrections k where ${correctionsOf({ ...request, tubeIds: [correctedTube] })}`,
          'k.observed_at',
        ];
  const latest = `
      select distinct on (${instant}) ${position} as tube, k.tube_id, k.observed_at,
             coalesce(k.value_after, k.value_before) as value, k.status_after as status
      from ${corrections}
      order by ${instant}, k.change_order desc`;
  if (leaving === false) return `with ${listedTubes(request)}, delta as (${latest})`;
  return `
    with ${listedTubes(request)},
    latest as (${latest}),
    firsts as (
      select distinct on (${instant}) ${position} as tube, k.observed_at, k.status_before
      from ${corrections}
      order by ${instant}, k.change_order
    ),
    delta as (
      select tube, tube_id, observed_at, value,
             case when ${passes('status')} then status else ${REMOVED_CODE}::int2 end as status
      from latest
      where ${passes('status')}
         or (tube, observed_at) in (select tube, observed_at from firsts where ${passes('status_before')})
    )`;
}

/**
 * The measurements of tube `tubeId` within `range` (a tstzrange of the query), by the primary key. OFFSET 0
 * keeps it a scan of its own, run for each range with the range's bounds: pulled up into the join, the
 * planner may read the tube's whole series and filter it; and on a hypertable TimescaleDB excludes the
 * chunks outside each range at run time only in such a scan.
 */
const measuredIn = (tubeId: string, range: string, window: Window) => `
  select m.observed_at, ${measurementValue('m')} as value, m.status from measurements m
  where m.tube_id = ${tubeId} and m.observed_at >= lower(${range}) and m.observed_at <= upper(${range})
    and m.observed_at <@ ${range} and m.observed_at >= ${window.from} and m.observed_at < ${window.to}
  offset 0`;

/**
 * Literal bounds around every measurement a delta reads, so that its select plans only the chunks the
 * changes touched (none when none did), never one outside the interval its document locked
 * (src/engine/chunkLocks.ts): the span of deltaContents, else the interval.
 */
function changedSpan({ from, to, contents }: ChangedMeasurements): Window {
  // Nothing changed: an empty window, which excludes every chunk while planning.
  const span = contents === undefined ? { from, to } : (contents.span ?? { from: to, to: from });
  return { from: instantLiteral(span.from), to: instantLiteral(span.to) };
}

/**
 * The change history that sync tokens read (sql/006, sql/009, src/sync/): each writer records, in its own
 * transaction, the runs of instants of each tube in which it inserted every row (measurement_changes),
 * and each row it corrected (another value or status, or removed) with its version before and after
 * (measurement_corrections), both with the transaction's change order. Two things make a run exact:
 *
 * - Before it looks at what is stored for a tube, an import locks the tube's row (`lockTubes`), and
 *   holds the lock to its commit. Imports of the same tube therefore follow one another: a later one
 *   sees what an earlier one committed, and no other import can put a row inside a run between the
 *   check and the commit. Imports of other tubes are not held up.
 * - A run's bounds are instants the import inserted, so its rows, and its buckets, are all new ones.
 *
 * The importers also raise the tube's series version here (seriesChanged.ts): same rows, same statement.
 */
import type { Fragment, TransactionSql } from 'postgres';
import type { Sql } from '../../db/connect.js';
import { formatInstant, type Instant } from '../../domain/datetime.js';
import type { DayRollup } from './directDays.js';
import type { LatestRow } from './directRows.js';
import { markSeriesChanged } from './seriesChanged.js';

/** Lock not available (NOWAIT). */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Locks the rows of the tubes `identifiers` selects (uuid text, or a subquery of them), in id order so
 * that two imports waiting for each other's tubes cannot deadlock. `nowait`: fail at once (55P03)
 * rather than wait; the direct path, which locks tubes as the file names them (in no fixed order), must
 * never wait, and gives way to the staging path instead. Send it before the statement that looks at the
 * tubes' stored rows: that one's snapshot then follows the lock.
 */
export function lockTubes(q: TransactionSql, identifiers: string[] | Fragment, options: { nowait: boolean }) {
  const which = Array.isArray(identifiers) ? q`select unnest(${identifiers}::uuid[])` : identifiers;
  return q`
    select from tubes where identifier in (${which}) order by id
    for no key update ${options.nowait ? q`nowait` : q``}`;
}

export interface TubeRun {
  tubeId: number;
  first: Instant;
  last: Instant;
}

/** The direct path: every row of each tube from its first to its last instant in the file is new. */
export function recordDirectRuns(q: TransactionSql, runs: readonly TubeRun[]) {
  const ids = runs.map((run) => run.tubeId);
  return q`
    with changed as (${markSeriesChanged(q, q`select unnest(${ids}::int[])`)})
    insert into measurement_changes (tube_id, first_at, last_at)
    select * from unnest(${ids}::int[], ${runs.map((run) => formatInstant(run.first))}::timestamptz[],
                         ${runs.map((run) => formatInstant(run.last))}::timestamptz[])`;
}

/**
 * For a CTE of the plain INSERT, over `written` (a CTE of the rows it RETURNed: tube_id, observed_at):
 * one run per tube. Exact because no stored row of the tube fell inside the file's range (checked under
 * the tube's lock), so every row between the tube's first and last written instant is the file's.
 */
export const recordInsertedRuns = (q: TransactionSql) => q`
  insert into measurement_changes (tube_id, first_at, last_at)
  select tube_id, min(observed_at), max(observed_at) from written group by tube_id`;

/**
 * For a CTE of the upsert, over `written` (tube_id, observed_at, inserted): the runs of the rows it
 * inserted, or with `corrected` of the rows it gave another value (those are corrections too:
 * recordCorrections; their runs are for the release before, sql/009). Reads `measurements` in the same
 * statement, whose snapshot does not see the upsert's own rows: what was stored before it.
 *
 * A tube with nothing stored before between its first and last such row, but the rows the upsert
 * changed, is one run, found by one count. Otherwise consecutive such rows form a run when nothing was
 * stored between them: a row between them is then either stored before (found), or the file's and
 * written (then not between consecutive ones, or inserted and so in a corrected run harmlessly).
 */
export const recordUpsertedRuns = (q: TransactionSql, { corrected }: { corrected: boolean }) => q`
  insert into measurement_changes (tube_id, first_at, last_at, corrected)
  with listed as (
    select tube_id, observed_at from written where inserted <> ${corrected}
  ), spans as (
    select tube_id, min(observed_at) as first_at, max(observed_at) as last_at, count(*) as listed
    from listed group by tube_id
  ), whole as (
    select s.tube_id, s.first_at, s.last_at from spans s
    where (select count(*) from measurements m
           where m.tube_id = s.tube_id and m.observed_at between s.first_at and s.last_at)
          = case when ${corrected} then s.listed else 0 end
  )
  select tube_id, first_at, last_at, ${corrected} from whole
  union all
  select tube_id, min(observed_at), max(observed_at), ${corrected}
  from (
    select tube_id, observed_at, count(*) filter (where starts) over (partition by tube_id order by observed_at) as run
    from (
      select w.tube_id, w.observed_at,
             w.previous is null or exists (
               select from measurements m
               where m.tube_id = w.tube_id and m.observed_at > w.previous and m.observed_at < w.observed_at
             ) as starts
      from (select tube_id, observed_at,
                   lag(observed_at) over (partition by tube_id order by observed_at) as previous
            from listed where tube_id not in (select tube_id from whole)) w
    ) steps
  ) runs
  group by tube_id, run`;

/**
 * For a CTE of a statement that changed stored rows, over `written` (tube_id, observed_at, value, status,
 * inserted: as the statement left them, the value decoded): each changed row, with its version before, read from
 * `measurements` in the same statement, whose snapshot does not see the statement's own writes. Inserted
 * rows corrected nothing (their runs list them).
 *
 * The stored rows are read tube by tube over the span of its changed rows (a lateral subquery the planner
 * cannot flatten): with the tube and the bounds as its parameters, TimescaleDB opens only the compressed
 * batches of that tube and span, where a join on the rows lets it choose to decompress every chunk.
 */
export const recordCorrections = (q: TransactionSql) => q`
  insert into measurement_corrections (tube_id, observed_at, value_before, status_before, value_after, status_after)
  select m.tube_id, m.observed_at, m.value, m.status, w.value, w.status
  from (select tube_id, min(observed_at) as first_at, max(observed_at) as last_at
        from written where not inserted group by tube_id) s
  cross join lateral (
    select m.tube_id, m.observed_at, measurement_value(m.value, m.value_thousandths) as value, m.status
    from measurements m
    where m.tube_id = s.tube_id and m.observed_at between s.first_at and s.last_at
    offset 0
  ) m
  join written w on w.tube_id = m.tube_id and w.observed_at = m.observed_at
  where not w.inserted`;

/** For a CTE of a DELETE, over `removed` (tube_id, observed_at, value decoded, status): each row as removed. */
export const recordRemovals = (q: TransactionSql) => q`
  insert into measurement_corrections (tube_id, observed_at, value_before, status_before)
  select tube_id, observed_at, value, status from removed`;

/**
 * The direct path's latest measurements, without searching the table: each of its tubes had nothing
 * stored at or after its first row in the file (checked under the tube's lock), so the file's last row
 * of a status is that tube's latest of the status, and the file leaves the other statuses' as they were.
 * What refresh_latest_measurements would find, at no cost per row.
 */
export const recordDirectLatest = (q: TransactionSql, latest: readonly LatestRow[]) => q`
  insert into latest_measurements (tube_id, status, observed_at, value)
  select * from unnest(${latest.map((row) => row.tubeId)}::int[], ${latest.map((row) => row.status)}::int2[],
                       ${latest.map((row) => formatInstant(row.instant))}::timestamptz[],
                       ${latest.map((row) => row.value)}::float8[])
  on conflict (tube_id, status) do update set observed_at = excluded.observed_at, value = excluded.value`;

/**
 * For a CTE of the staging path's plain INSERT, over `written` (tube_id, observed_at, value, status):
 * its latest measurements without searching the table. Nothing was stored inside each tube's range in
 * the file (insertIfAllNew), so a stored latest of a status lies before the range, and the file's last
 * row of that status replaces it, or after it, and stands.
 */
export const recordInsertedLatest = (q: TransactionSql) => q`
  insert into latest_measurements (tube_id, status, observed_at, value)
  select distinct on (tube_id, status) tube_id, status, observed_at, value
  from written order by tube_id, status, observed_at desc
  on conflict (tube_id, status) do update set observed_at = excluded.observed_at, value = excluded.value
  where latest_measurements.observed_at < excluded.observed_at`;

/**
 * Brings the latest measurement of each tube and status up to date with what the transaction wrote
 * (sql/009): every writer of measurements but the plain inserts (recordDirectLatest,
 * recordInsertedLatest) sends it last, after its change rows and corrections.
 */
export async function refreshLatest(q: TransactionSql): Promise<void> {
  await q`select refresh_latest_measurements()`;
}

/**
 * Brings the daily rollups of `aggregate=P1D` up to date with what the transaction wrote (sql/011):
 * every writer of measurements but the direct path (recordDirectDays) sends it after its change rows
 * and corrections, as refreshLatest.
 */
export async function refreshDayRollups(q: TransactionSql): Promise<void> {
  await q`select refresh_measurement_day_rollups()`;
}

/**
 * The daily rollups of a direct import (directDays.ts): days it summed from the file, and days it left to
 * the database to sum from the stored rows, all of whose rows have been sent. The statements are to be
 * run in their order.
 */
export function recordDirectDays(
  q: TransactionSql,
  summed: readonly DayRollup<{ id: number }>[],
  left: readonly { tube: { id: number }; day: number }[] = [],
) {
  const dayText = (seconds: number) => formatInstant({ seconds, micros: 0 });
  const removed = q`
    delete from measurement_day_rollups r
    using unnest(${summed.map((row) => row.tube.id)}::int[], ${summed.map((row) => dayText(row.day))}::timestamptz[])
      as d(tube_id, day)
    where r.tube_id = d.tube_id and r.day = d.day`;
  const summedRows = q`
    insert into measurement_day_rollups (tube_id, day, statuses, present, count, mean, min, max)
    select * from unnest(${summed.map((row) => row.tube.id)}::int[], ${summed.map((row) => dayText(row.day))}::timestamptz[],
                         ${summed.map((row) => row.statuses)}::int2[], ${summed.map((row) => row.present)}::int2[],
                         ${summed.map((row) => row.count)}::int8[], ${summed.map((row) => row.mean)}::float8[],
                         ${summed.map((row) => row.min)}::float8[], ${summed.map((row) => row.max)}::float8[])`;
  if (left.length === 0) return [removed, summedRows];
  const leftRows = q`
    select rollup_measurement_days(tube_id, array_agg(day))
    from unnest(${left.map((row) => row.tube.id)}::int[], ${left.map((row) => dayText(row.day))}::timestamptz[])
      as d(tube_id, day)
    group by tube_id`;
  return [removed, summedRows, leftRows];
}

/**
 * Deletes the change history recorded more than `days` ago (SYNC_HISTORY_DAYS): change rows and
 * corrections alike, since a delta needs both. Raises the horizon below which tokens are answered 410
 * (src/sync/sql.ts, syncGone) over the xids of both in the same transaction, so no reader sees one
 * without the other. Returns the number of rows deleted from the two.
 */
export async function pruneChangeLog(sql: Sql, days: number): Promise<number> {
  const [row] = await sql<{ deleted: string }[]>`
    with cutoff as (select now() - make_interval(days => ${days}) as at),
    pruned as (
      delete from measurement_changes where recorded_at < (select at from cutoff) returning xid
    ), pruned_corrections as (
      delete from measurement_corrections where recorded_at < (select at from cutoff) returning xid
    ), history as (
      select xid from pruned union all select xid from pruned_corrections
    ), horizon as (
      -- max(xid8) needs PostgreSQL 15; ordering by xid8 works from 13 on.
      update sync_state
      set pruned_through = greatest(pruned_through, (select xid from history order by xid desc limit 1))
      where exists (select from history)
    )
    select count(*) as deleted from history`;
  return Number(row?.deleted ?? 0);
}

/**
 * The change log that sync tokens read (sql/006, src/v1/sync/): each import records, in its own
 * transaction, the runs of instants of each tube in which it wrote every row. Two things make a run exact:
 *
 * - Before it looks at what is stored for a tube, an import locks the tube's row (`lockTubes`), and
 *   holds the lock to its commit. Imports of the same tube therefore follow one another: a later one
 *   sees what an earlier one committed, and no other import can put a row inside a run between the
 *   check and the commit. Imports of other tubes are not held up.
 * - A run's bounds are instants the import wrote, so its rows, and its buckets, are all changed ones.
 *
 * The importers also raise the tube's series version here (seriesChanged.ts): same rows, same statement.
 */
import type { Fragment, TransactionSql } from 'postgres';
import type { Sql } from '../../db/connect.js';
import { formatInstant, type Instant } from '../../domain/datetime.js';
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
 * For a CTE of the upsert, over `written` (tube_id, observed_at of the rows it inserted or changed):
 * consecutive written rows of a tube form one run when no row was stored between them before the
 * statement. That is read from `measurements` in the same statement, whose snapshot does not see the
 * upsert's own rows: a row between them is then either stored before (found) or the file's (then
 * written, and so not between consecutive written rows) or unchanged (then stored before, found).
 */
export const recordUpsertedRuns = (q: TransactionSql) => q`
  insert into measurement_changes (tube_id, first_at, last_at)
  select tube_id, min(observed_at), max(observed_at)
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
            from written) w
    ) steps
  ) runs
  group by tube_id, run`;

/**
 * Deletes the change history recorded more than `days` ago (SYNC_HISTORY_DAYS), and raises the horizon
 * below which tokens are answered 410 (src/v1/sync/sql.ts, syncGone) in the same transaction, so no
 * reader sees one without the other. Returns the number of change rows deleted.
 */
export async function pruneChangeLog(sql: Sql, days: number): Promise<number> {
  const [row] = await sql<{ deleted: string }[]>`
    with pruned as (
      delete from measurement_changes where recorded_at < now() - make_interval(days => ${days}) returning xid
    ), horizon as (
      update sync_state set pruned_through = greatest(pruned_through, (select max(xid) from pruned))
      where exists (select from pruned)
    )
    select count(*) as deleted from pruned`;
  return Number(row?.deleted ?? 0);
}

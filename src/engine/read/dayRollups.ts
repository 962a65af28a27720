/**
 * Daily buckets from the rollups every writer keeps (measurement_day_rollups, sql/011): a bucket that is
 * exactly a UTC day is read as one stored row, computed by the same aggregates over the same rows as the
 * bucket itself (buckets.ts), so the same doubles, rather than from every measurement of the day.
 */
import { AGGREGATE_SECONDS } from '../../contract.js';
import type { Queryable } from '../../db/connect.js';
import { microsBetween, parseInstant } from '../../domain/datetime.js';
import { STATUSES } from '../../domain/status.js';
import { bucketStart, bucketsOf, bucketsWindow } from './buckets.js';
import { instantLiteral, int4ArrayLiteral, integerLiteral } from './literals.js';

/** A UTC midnight as the routes write an instant (RFC 3339, `Z`, any zero fraction). */
const MIDNIGHT = /T00:00:00(?:\.0{1,6})?Z$/;

/** Whether buckets of `seconds` from `from` are UTC days, the days the rollups hold. */
export const bucketsAreDays = (from: string, seconds: number) =>
  seconds === AGGREGATE_SECONDS.P1D && MIDNIGHT.test(from);

/** The set of status codes a filter passes, as the rollups' `statuses` (bit s for code s); every one without. */
export function statusSetOf(statuses: readonly number[] | undefined): number {
  const codes = statuses ?? STATUSES.map((_, code) => code);
  if (codes.length === 0) throw new Error('a status filter that passes no status');
  return codes.reduce((set, code) => {
    if (!Number.isInteger(code) || code < 0 || code >= STATUSES.length)
      throw new Error(`not a status code: ${code}`);
    return set | (1 << code);
  }, 0);
}

/** Whether rollup `alias` is the one that summarises exactly the statuses a filter passes of its day. */
export const rollupSummarises = (alias: string, statuses: readonly number[] | undefined) =>
  `${alias}.statuses = ${alias}.present & ${integerLiteral(statusSetOf(statuses))} and ${alias}.mean is not null`;

/**
 * Whether rollup `alias` says its day has values too large to sum ahead of a read (sql/011): the
 * predicate of sql/017's partial index, which finds such days without reading the others.
 */
export const rollupUnsummed = (alias: string) =>
  `${alias}.statuses = ${alias}.present and ${alias}.mean is null`;

/** A day of a tube whose rollup has no mean: its bucket is computed from its measurements. */
export interface UnsummedDay {
  tube: number;
  /** The day's bucket number, 0 for `from`'s day. */
  k: number;
}

/**
 * The whole days of [from, to) of `tubeIds` whose rollups have no mean, read in the document's snapshot
 * before its select is written: the select then names `measurements` only for the days it computes, with
 * literal bounds, so the planner opens no chunk beyond them (none at all, nearly always), and never one
 * outside the interval the document locked (chunkLocks.ts).
 */
export async function unsummedDays(
  tx: Queryable,
  tubeIds: readonly number[],
  from: string,
  to: string,
): Promise<UnsummedDay[]> {
  const select = unsummedDaysSelect(tubeIds, from, to);
  return select === undefined ? [] : tx.unsafe<UnsummedDay[]>(select);
}

/** unsummedDays' select; undefined when [from, to) holds no whole day, or there is no tube. */
export function unsummedDaysSelect(tubeIds: readonly number[], from: string, to: string): string | undefined {
  const { start, wholeDays } = daysOf(from, to);
  if (wholeDays === 0 || tubeIds.length === 0) return undefined;
  return `
    select rollup.tube_id as tube, (extract(epoch from rollup.day - ${instantLiteral(from)}) / 86400)::int4 as k
    from measurement_day_rollups rollup
    where rollup.tube_id = any(${int4ArrayLiteral(tubeIds)})
      and rollup.day >= ${instantLiteral(from)}
      and rollup.day < ${instantLiteral(bucketStart(start, DAY_SECONDS, wholeDays))}
      and ${rollupUnsummed('rollup')}
    order by rollup.tube_id, rollup.day`;
}

const DAY_SECONDS = AGGREGATE_SECONDS.P1D;

/** `from` (a UTC midnight), the whole days of [from, to), and whether a last day is cut short by `to`. */
export function daysOf(from: string, to: string) {
  const start = parseInstant(from);
  const micros = microsBetween(start, parseInstant(to));
  const wholeDays = Math.max(0, Math.floor(micros / (DAY_SECONDS * 1_000_000)));
  return { start, wholeDays, lastCutShort: micros > wholeDays * DAY_SECONDS * 1_000_000 };
}

/**
 * The daily buckets of [from, to) for tube `id` (an SQL expression), written as `position`, from a
 * UTC midnight `from`, oldest first: each whole day from its rollup that summarises exactly the statuses
 * the filter passes of it (none when it passes none); computed from its measurements (`passes`: the
 * filter as a condition on them), as any bucket, each day of `unsummed` (unsummedDays) and a last bucket
 * cut short by `to`.
 */
export function dayRollupSelect(
  id: string,
  position: string,
  from: string,
  to: string,
  statuses: readonly number[] | undefined,
  passes: string | undefined,
  unsummed: readonly UnsummedDay[],
): string {
  const buckets = bucketsOf(from, to, AGGREGATE_SECONDS.P1D);
  const { start, wholeDays, lastCutShort } = daysOf(from, to);
  const rollups = `select ${position} as tube, rollup.day as observed_at, rollup.mean as value, rollup.min,
        rollup.max, rollup.count
      from measurement_day_rollups rollup
      where rollup.tube_id = ${id}
        and rollup.day >= ${buckets.start}
        and rollup.day < ${instantLiteral(bucketStart(start, DAY_SECONDS, wholeDays))}
        and ${rollupSummarises('rollup', statuses)}`;
  const computed = [
    ...unsummed.map(({ tube, k }) => `(${integerLiteral(tube)}, ${integerLiteral(k)})`),
    ...(lastCutShort ? [`(${id}, ${integerLiteral(wholeDays)})`] : []),
  ];
  if (computed.length === 0)
    return `${rollups}
    order by observed_at`;
  const first = Math.min(...unsummed.map(({ k }) => k), lastCutShort ? wholeDays : Number.POSITIVE_INFINITY);
  const last = Math.max(...unsummed.map(({ k }) => k), lastCutShort ? wholeDays : 0);
  const window = bucketsWindow(from, to, DAY_SECONDS, first, last);
  return `select * from (
      ${rollups}
      union all
      select ${position} as tube, ${buckets.columns}
      from (values ${computed.join(', ')}) as computed(tube_id, k)
      ${buckets.perBucket(id, 'computed.k', passes, window)}
      where computed.tube_id = ${id} and measured.count > 0
    ) as days
    order by observed_at`;
}

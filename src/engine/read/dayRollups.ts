/**
 * Daily buckets from the rollups every writer keeps (measurement_day_rollups, sql/011): a bucket that is
 * exactly a UTC day is read as one stored row, computed by the same aggregates over the same rows as the
 * bucket itself (buckets.ts), so the same doubles, rather than from every measurement of the day.
 */
import { AGGREGATE_SECONDS } from '../../contract.js';
import { STATUSES } from '../../domain/status.js';
import { bucketsOf } from './buckets.js';
import { integerLiteral } from './literals.js';

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

/**
 * The daily buckets of [from, to) for tube `id` (an SQL expression), written as `position`, from a
 * UTC midnight `from`, oldest first: each whole day from its rollup that summarises exactly the statuses
 * the filter passes of it (none when it passes none); computed from its measurements (`passes`: the
 * filter as a condition on them), as any bucket, a day whose rollup has no mean (values too large to
 * sum safely ahead of a read, sql/011) and a last bucket cut short by `to`.
 */
export function dayRollupSelect(
  id: string,
  position: string,
  from: string,
  to: string,
  statuses: readonly number[] | undefined,
  passes: string | undefined,
): string {
  const buckets = bucketsOf(from, to, AGGREGATE_SECONDS.P1D);
  const wholeDays = buckets.numberOf(buckets.end);
  const rollups = (alias: string) => `measurement_day_rollups ${alias}
      where ${alias}.tube_id = ${id}
        and ${alias}.day >= ${buckets.start} and ${alias}.day < ${buckets.start} + ${wholeDays} * ${buckets.stride}`;
  return `select * from (
      select ${position} as tube, rollup.day as observed_at, rollup.mean as value, rollup.min, rollup.max,
             rollup.count
      from ${rollups('rollup')}
        and rollup.statuses = rollup.present & ${integerLiteral(statusSetOf(statuses))}
        and rollup.mean is not null
      union all
      select ${position} as tube, ${buckets.columns}
      from (
        select ${buckets.numberOf('unsummed.day')} as k from ${rollups('unsummed')}
          and unsummed.statuses = unsummed.present and unsummed.mean is null
        union all
        select generate_series(${wholeDays}, ${buckets.count} - 1)
      ) as computed
      ${buckets.perBucket(id, 'computed.k', passes)}
      where measured.count > 0
    ) as days
    order by observed_at`;
}

/** The SQL of latest: the latest measurement of each listed tube among the statuses that pass. */
import { int4ArrayLiteral, statusCondition } from '../../engine/read/literals.js';

/**
 * The rows of `tubeIds`, in the list's order, each the latest of its tube among `statuses` (codes;
 * undefined for every status), as the columns of a raw batch (`status` fourth with `withStatus`); a
 * tube without one has no row. latest_measurements (sql/009) holds the latest of each tube and status,
 * kept by every writer in its own transaction, so this reads at most three rows of it per tube and no
 * measurement at all.
 */
export function latestSelect(
  tubeIds: readonly number[],
  statuses: readonly number[] | undefined,
  withStatus: boolean,
): string {
  const filter = statusCondition(statuses);
  return `select (listed.position - 1)::int4 as tube, latest.observed_at, latest.value
      ${withStatus ? ', latest.status' : ''}
    from unnest(${int4ArrayLiteral(tubeIds)}) with ordinality as listed(id, position)
    cross join lateral (
      select observed_at, value, status from latest_measurements
      where tube_id = listed.id ${filter === undefined ? '' : `and ${filter}`}
      order by observed_at desc
      limit 1
    ) as latest
    order by listed.position`;
}

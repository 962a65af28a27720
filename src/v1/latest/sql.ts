/** The SQL of latest: the latest measurement of each listed tube among the statuses that pass. */
import { int4ArrayLiteral, statusCondition } from '../../engine/read/literals.js';
import { STATUSES } from '../../engine/schemas.js';

/**
 * The rows of `tubeIds`, in the list's order, each the latest of its tube among `statuses` (codes;
 * undefined for every status), as the columns of a raw batch (`status` fourth with `withStatus`); a
 * tube without one has no row. latest_measurements (sql/009) holds the latest of each tube and status,
 * kept by every writer in its own transaction, so this reads at most three rows of it per tube and no
 * measurement at all. One join and one sort rather than a lookup per tube, which costs several times
 * more for thousands of tubes; the planner still looks each tube up when the list is short.
 */
export function latestSelect(
  tubeIds: readonly number[],
  statuses: readonly number[] | undefined,
  withStatus: boolean,
): string {
  const filter = statusCondition(statuses, STATUSES.length, 'latest.status');
  return `select distinct on (listed.position)
      (listed.position - 1)::int4 as tube, latest.observed_at, latest.value
      ${withStatus ? ', latest.status' : ''}
    from unnest(${int4ArrayLiteral(tubeIds)}) with ordinality as listed(id, position)
    join latest_measurements latest on latest.tube_id = listed.id ${filter === undefined ? '' : `and ${filter}`}
    order by listed.position, latest.observed_at desc`;
}

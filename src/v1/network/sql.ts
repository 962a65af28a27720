/** The SQL of the network endpoint: which tubes a response holds, in discovery's order. */
import type { Queryable } from '../../db/connect.js';
import { int4ArrayLiteral } from '../../engine/read/literals.js';
import type { TubeColumns, TubeRow } from '../../engine/read/selects.js';
import type { Client } from '../../keys/clients.js';
import { groupWells } from '../wells/route.js';

export interface NetworkTubeRow extends TubeRow {
  /** Canonical (lower-case) identifier. */
  identifier: string;
  number: string;
  wellName: string;
  /** When the well's name last changed (sql/005): it moves the tube in the order. */
  wellChangedAt: Date;
}

/**
 * The tubes the client may read, or of those the ones `listed` (canonical identifiers), in the order of
 * discovery: wells by name, tubes by number, both natural. Ordered by discovery's own grouping, so the
 * two cannot disagree. Hidden tubes never leave the database.
 */
export async function tubesInView(
  sql: Queryable,
  client: Client,
  listed: readonly string[] | undefined,
): Promise<NetworkTubeRow[]> {
  const rows = await sql<NetworkTubeRow[]>`
    select t.id, t.identifier::text as identifier, t.number, t.unit, t.vertical_datum as "verticalDatum",
           t.series_version::text as "seriesVersion", t.series_changed_at as "seriesChangedAt",
           w.name as "wellName", w.changed_at as "wellChangedAt"
    from tubes t join wells w on w.id = t.well_id
    where (${client.allTubes} or t.id = any(${[...client.grants]}::int[]))
      ${listed === undefined ? sql`` : sql`and t.identifier = any(${listed as string[]}::uuid[])`}`;
  const byIdentifier = new Map(rows.map((row) => [row.identifier, row]));
  return groupWells(rows).flatMap((well) => well.tubes.map((tube) => byIdentifier.get(tube.identifier)!));
}

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

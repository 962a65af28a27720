/** The SQL of the network endpoint: which tubes a response holds, in discovery's order. */
import type { Queryable } from '../../db/connect.js';
import { groupWells } from '../../domain/discoveryOrder.js';
import type { TubeRow } from '../../engine/read/tubes.js';
import type { Client } from '../../keys/clients.js';

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
  return groupWells(rows).flatMap((well) => well.tubes);
}

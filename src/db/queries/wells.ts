import type { Queryable } from '../connect.js';

export interface VisibleTubeRow {
  wellName: string;
  identifier: string;
  number: string;
}

/**
 * Every tube the client may read, with its well's name: one query whatever the number of wells.
 * Hidden tubes never leave the database, so nothing about them can reach a response.
 */
export async function visibleTubes(
  sql: Queryable,
  client: { allTubes: boolean; grants: ReadonlySet<number> },
): Promise<VisibleTubeRow[]> {
  return sql<VisibleTubeRow[]>`
    select w.name as "wellName", t.identifier::text as identifier, t.number
    from tubes t
    join wells w on w.id = t.well_id
    where ${client.allTubes} or t.id = any(${[...client.grants]}::int[])`;
}

import type { Queryable } from '../../db/connect.js';

export interface VisibleTubeRow {
  wellName: string;
  identifier: string;
  number: string;
}

export interface Grants {
  allTubes: boolean;
  grants: ReadonlySet<number>;
}

/**
 * Every tube the client may read, with its well's name, and the registry version (sql/003) and the
 * time of its last change (sql/004) of the same snapshot: one query whatever the number of wells. Hidden tubes never leave the database, so
 * nothing about them can reach a response.
 */
export async function visibleTubes(
  sql: Queryable,
  client: Grants,
): Promise<{ version: string; changedAt: Date; rows: VisibleTubeRow[] }> {
  // The left join keeps the version row when the client sees no tube at all.
  const rows = await sql<(VisibleTubeRow & { version: string; changedAt: Date })[]>`
    select v.version::text as version, v.changed_at as "changedAt",
           w.name as "wellName", t.identifier::text as identifier, t.number
    from registry_version v
    left join (tubes t join wells w on w.id = t.well_id)
      on ${client.allTubes} or t.id = any(${[...client.grants]}::int[])`;
  return {
    version: rows[0]?.version ?? '',
    changedAt: rows[0]?.changedAt ?? new Date(),
    rows: rows.filter((row) => row.wellName !== null),
  };
}

/** The registry version alone: what a cached discovery body is checked against. */
export async function registryVersion(sql: Queryable): Promise<string> {
  const [row] = await sql<{ version: string }[]>`select version::text as version from registry_version`;
  return row?.version ?? '';
}

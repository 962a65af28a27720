import type { Queryable } from '../../db/connect.js';
import { timelineHistories, WAL_PLACE_COLUMNS, walPlaceOf } from '../../db/walHistory.js';
import type { VisibleTubeRow } from './document.js';

export interface Grants {
  allTubes: boolean;
  grants: ReadonlySet<number>;
}

/**
 * Every tube the client may read, with its well's name and location, the registry version (sql/003) of
 * the same snapshot, and when what the client sees last changed: one query whatever the number of
 * wells. Hidden tubes never leave the database, and their changes do not move `changedAt` (sql/005,
 * sql/008), so nothing about them can reach a response.
 */
export async function visibleTubes(
  sql: Queryable,
  client: Grants,
): Promise<{ version: string; changedAt: Date; rows: VisibleTubeRow[] }> {
  // The left join keeps the version row when the client sees no tube at all.
  const rows = await sql<(VisibleTubeRow & { version: string; changedAt: Date; walPlace: string })[]>`
    select ${sql.unsafe(HISTORY_VERSION)} as version, ${sql.unsafe(WAL_PLACE_COLUMNS)},
           case when ${client.allTubes} then v.changed_at
                else greatest(t.series_changed_at, t.elevations_changed_at, w.changed_at, w.location_changed_at)
           end as "changedAt",
           w.name as "wellName", w.longitude, w.latitude,
           t.identifier::text as identifier, t.number, t.unit, t.vertical_datum as "verticalDatum",
           t.ground_level as "groundLevel", t.tube_top as "tubeTop",
           t.screen_top as "screenTop", t.screen_bottom as "screenBottom"
    from registry_version v
    left join (tubes t join wells w on w.id = t.well_id)
      on ${client.allTubes} or t.id = any(${[...client.grants]}::int[])`;
  const visible = rows.filter((row) => row.wellName !== null);
  const latest = visible.reduce<Date | undefined>(
    (last, row) => (last === undefined || row.changedAt > last ? row.changedAt : last),
    undefined,
  );
  // Never before its history began: a restored registry's change times precede what clients saw.
  const { began } = await timelineHistories.of(sql, walPlaceOf(rows[0]!.walPlace));
  return {
    version: rows[0]!.version,
    // Seeing nothing (a 403) has no change time of its own.
    changedAt: latest === undefined ? new Date(0) : latest > began ? latest : began,
    rows: visible,
  };
}

/** The registry version `v` on its history: `<system>.<timeline>/<version>` (discoveryCache.ts). */
const HISTORY_VERSION = `(select concat(system, '.', timeline, '/', v.version) from wal_place())`;

/** The registry version alone: what a cached discovery body is checked against. */
export async function registryVersion(sql: Queryable): Promise<string> {
  const [row] = await sql<
    { version: string }[]
  >`select ${sql.unsafe(HISTORY_VERSION)} as version from registry_version v`;
  return row!.version;
}

/**
 * Upserts wells (by name) and tubes (by identifier) in one transaction. A tube may move to another well
 * and change number, unit, datum and elevations; wells and tubes the registry does not mention are left
 * alone, and those it mentions are stated whole (a field left out takes its default, or becomes unknown).
 */
import type { Sql } from '../../db/connect.js';
import { begin } from '../../db/transaction.js';
import { type CheckedRegistry, checkRegistry } from './registryCheck.js';
import {
  type RegistryIssue,
  type RegistryPath,
  RegistryRejected,
  type RegistryWell,
} from './registryTypes.js';

export type { RegistryLocation, RegistryTube, RegistryWell } from './registryTypes.js';
export { RegistryRejected } from './registryTypes.js';

const ELEVATIONS = ['groundLevel', 'tubeTop', 'screenTop', 'screenBottom'] as const;

export interface RegistryCounts {
  wells: number;
  tubes: number;
}

/** Checks and writes the registry; throws `RegistryRejected` (and writes nothing) when it breaks a rule. */
export async function upsertRegistry(sql: Sql, wells: readonly RegistryWell[]): Promise<RegistryCounts> {
  const checked = checkRegistry(wells);
  if (!checked.ok) throw new RegistryRejected(checked.issues);
  await writeRegistry(sql, checked.wells);
  return { wells: checked.wells.length, tubes: checked.wells.reduce((n, well) => n + well.tubes.length, 0) };
}

async function writeRegistry(sql: Sql, wells: CheckedRegistry): Promise<void> {
  const tubes = wells.flatMap((well, w) => well.tubes.map((tube, i) => ({ ...tube, well: well.name, w, i })));
  const identifiers = tubes.map((t) => t.identifier);
  const wellNames = tubes.map((t) => t.well);
  const numbers = tubes.map((t) => t.number);
  await begin(sql, async (tx) => {
    // Concurrent registry imports would each pass the clash check and then collide; one at a time.
    // Readers are not blocked.
    await tx`lock table wells, tubes in share row exclusive mode`;
    // A listed well is stated whole: no location in the file is an unknown one.
    await tx`insert into wells (name, longitude, latitude)
      select * from unnest(${wells.map((w) => w.name)}::text[],
                           ${wells.map((w) => w.location?.longitude ?? null)}::float8[],
                           ${wells.map((w) => w.location?.latitude ?? null)}::float8[])
      on conflict (name) do update set longitude = excluded.longitude, latitude = excluded.latitude
        where (wells.longitude, wells.latitude) is distinct from (excluded.longitude, excluded.latitude)`;
    const elevations = (name: (typeof ELEVATIONS)[number]) => tubes.map((t) => t[name] ?? null);
    await tx`create temp table registry_input on commit drop as
      select i.ord, i.identifier, w.id as well_id, i.number, i.unit, i.vertical_datum,
             i.ground_level, i.tube_top, i.screen_top, i.screen_bottom
      from unnest(${identifiers}::uuid[], ${wellNames}::text[], ${numbers}::text[],
                  ${tubes.map((t) => t.unit)}::text[], ${tubes.map((t) => t.verticalDatum)}::text[],
                  ${elevations('groundLevel')}::float8[], ${elevations('tubeTop')}::float8[],
                  ${elevations('screenTop')}::float8[], ${elevations('screenBottom')}::float8[])
             with ordinality as i(identifier, well_name, number, unit, vertical_datum,
                                  ground_level, tube_top, screen_top, screen_bottom, ord)
      join wells w on w.name = i.well_name`;

    // A (well, number) held by a tube the file does not mention cannot be given to another tube.
    const clashes = await tx<{ ord: string; holder: string }[]>`
      select i.ord, t.identifier::text as holder
      from registry_input i join tubes t on t.well_id = i.well_id and t.number = i.number
      where t.identifier <> i.identifier
        and not exists (select from registry_input other where other.identifier = t.identifier)
      order by i.ord`;
    if (clashes.length > 0) {
      throw new RegistryRejected(
        clashes.map(({ ord, holder }): RegistryIssue => {
          const tube = tubes[Number(ord) - 1]!;
          const path: RegistryPath = [tube.w, 'tubes', tube.i, 'number'];
          return {
            path,
            reason: `well "${tube.well}" already has tube number "${tube.number}" with identifier ${holder}, which this file does not list`,
          };
        }),
      );
    }

    // Tubes that change place first step aside, so that swaps and moves within the file do not trip
    // over unique (well_id, number), which PostgreSQL checks row by row.
    await tx`update tubes t set number = 'moving ' || t.identifier::text
      from registry_input i
      where t.identifier = i.identifier and (t.well_id, t.number) is distinct from (i.well_id, i.number)`;
    // A listed tube is stated whole: an elevation the file leaves out becomes unknown.
    await tx`insert into tubes (identifier, well_id, number, unit, vertical_datum,
                                ground_level, tube_top, screen_top, screen_bottom)
      select identifier, well_id, number, unit, vertical_datum,
             ground_level, tube_top, screen_top, screen_bottom
      from registry_input order by ord
      on conflict (identifier) do update
        set well_id = excluded.well_id, number = excluded.number,
            unit = excluded.unit, vertical_datum = excluded.vertical_datum,
            ground_level = excluded.ground_level, tube_top = excluded.tube_top,
            screen_top = excluded.screen_top, screen_bottom = excluded.screen_bottom
        where (tubes.well_id, tubes.number, tubes.unit, tubes.vertical_datum,
               tubes.ground_level, tubes.tube_top, tubes.screen_top, tubes.screen_bottom)
          is distinct from (excluded.well_id, excluded.number, excluded.unit, excluded.vertical_datum,
                            excluded.ground_level, excluded.tube_top, excluded.screen_top, excluded.screen_bottom)`;
  });
}

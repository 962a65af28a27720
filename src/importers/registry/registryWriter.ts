/**
 * The one writer of wells and tubes, in the caller's transaction: `gwapi import registry` states each
 * listed well and tube whole (registry.ts), an importer of the field's files only what its format says
 * (formats/formatRows.ts). Wells are upserted by name, tubes by identifier; a tube may move to another
 * well and change number, unit, datum and elevations. Wells and tubes a statement does not mention are
 * left alone.
 */
import type { TransactionSql } from 'postgres';
import { elevationProblems } from './registryCheck.js';
import type { RegistryLocation } from './registryTypes.js';

/** What is said of a well: a location left undefined is left as stored; `null` states it unknown. */
export interface WellStatement {
  name: string;
  location?: RegistryLocation | null;
}

/**
 * What is said of a tube of one of the wells stated with it. A field left undefined is left as stored (a
 * new tube: unknown, unit `m`, datum `NAP`); `null` states an elevation unknown.
 */
export interface TubeStatement {
  identifier: string;
  wellName: string;
  number: string;
  unit?: string | undefined;
  verticalDatum?: string | undefined;
  groundLevel?: number | null | undefined;
  tubeTop?: number | null | undefined;
  screenTop?: number | null | undefined;
  screenBottom?: number | null | undefined;
}

/** Why the statement of one tube (its index among the tubes given) cannot be written. */
export interface TubeConflict {
  tube: number;
  field: string;
  reason: string;
}

const FIELDS = ['unit', 'verticalDatum', 'groundLevel', 'tubeTop', 'screenTop', 'screenBottom'] as const;

/**
 * Writes the statements; returns the conflicts (and writes no tube) when, merged with what is stored,
 * a tube's elevations break the registry's rules or its (well, number) is held by a tube not stated
 * here. The caller rolls its transaction back then, wells and all.
 */
export async function writeWellsAndTubes(
  tx: TransactionSql,
  wells: readonly WellStatement[],
  tubes: readonly TubeStatement[],
  /**
   * For a writer that holds no table lock (formats/formatRows.ts): locks the stated tubes, once each
   * exists, before they are read to be merged.
   */
  lockTubes?: () => Promise<unknown>,
): Promise<TubeConflict[]> {
  const located = wells.filter((w) => w.location !== undefined);
  // A stated location replaces the stored one; a well stated without one keeps its own.
  await tx`insert into wells (name, longitude, latitude)
    select * from unnest(${located.map((w) => w.name)}::text[],
                         ${located.map((w) => w.location?.longitude ?? null)}::float8[],
                         ${located.map((w) => w.location?.latitude ?? null)}::float8[])
    on conflict (name) do update set longitude = excluded.longitude, latitude = excluded.latitude
      where (wells.longitude, wells.latitude) is distinct from (excluded.longitude, excluded.latitude)`;
  const unlocated = wells.filter((w) => w.location === undefined).map((w) => w.name);
  await tx`insert into wells (name) select unnest(${unlocated}::text[]) on conflict (name) do nothing`;

  if (lockTubes) {
    // A tube new to the database is inserted bare first: one another writer is inserting at the same
    // time is then waited for and found, and the lock below holds it, so the merge reads what that
    // writer committed instead of nothing. A (well, number) held by another tube is left to the clash
    // check below.
    await tx`insert into tubes (identifier, well_id, number)
      select i.identifier, w.id, i.number
      from unnest(${tubes.map((t) => t.identifier)}::uuid[], ${tubes.map((t) => t.wellName)}::text[],
                  ${tubes.map((t) => t.number)}::text[]) as i(identifier, well_name, number)
      join wells w on w.name = i.well_name
      on conflict do nothing`;
    await lockTubes();
  }

  const column = <K extends (typeof FIELDS)[number]>(name: K) => tubes.map((t) => t[name] ?? null);
  // Bit i set: FIELDS[i] is stated.
  const stated = tubes.map((t) =>
    FIELDS.reduce((bits, name, i) => (t[name] === undefined ? bits : bits | (1 << i)), 0),
  );
  const pick = (bit: number, name: string, fallback: string) =>
    tx.unsafe(`case when i.stated & ${1 << bit} <> 0 then i.${name} else ${fallback} end`);
  // What each tube will be: the stated fields over the stored ones (or, for a new tube, the defaults).
  await tx`create temp table registry_input on commit drop as
    select i.ord, i.identifier, w.id as well_id, i.number,
           ${pick(0, 'unit', `coalesce(t.unit, 'm')`)} as unit,
           ${pick(1, 'vertical_datum', `coalesce(t.vertical_datum, 'NAP')`)} as vertical_datum,
           ${pick(2, 'ground_level', 't.ground_level')} as ground_level,
           ${pick(3, 'tube_top', 't.tube_top')} as tube_top,
           ${pick(4, 'screen_top', 't.screen_top')} as screen_top,
           ${pick(5, 'screen_bottom', 't.screen_bottom')} as screen_bottom
    from unnest(${tubes.map((t) => t.identifier)}::uuid[], ${tubes.map((t) => t.wellName)}::text[],
                ${tubes.map((t) => t.number)}::text[], ${stated}::int[],
                ${column('unit')}::text[], ${column('verticalDatum')}::text[],
                ${column('groundLevel')}::float8[], ${column('tubeTop')}::float8[],
                ${column('screenTop')}::float8[], ${column('screenBottom')}::float8[])
           with ordinality as i(identifier, well_name, number, stated, unit, vertical_datum,
                                ground_level, tube_top, screen_top, screen_bottom, ord)
    join wells w on w.name = i.well_name
    left join tubes t on t.identifier = i.identifier`;
  try {
    const conflicts = await findConflicts(tx, tubes);
    if (conflicts.length === 0) await upsertTubes(tx);
    return conflicts;
  } finally {
    await tx`drop table registry_input`;
  }
}

async function findConflicts(tx: TransactionSql, tubes: readonly TubeStatement[]): Promise<TubeConflict[]> {
  const conflicts: TubeConflict[] = [];
  // Only tubes with some elevation stated can break the rules: the stored rest keeps them.
  if (
    tubes.some((t) => t.tubeTop !== undefined || t.screenTop !== undefined || t.screenBottom !== undefined)
  ) {
    const merged = await tx<
      { ord: string; tubeTop: number | null; screenTop: number | null; screenBottom: number | null }[]
    >`
      select ord, tube_top as "tubeTop", screen_top as "screenTop", screen_bottom as "screenBottom"
      from registry_input order by ord`;
    for (const row of merged) {
      for (const problem of elevationProblems(row)) {
        conflicts.push({ tube: Number(row.ord) - 1, ...problem });
      }
    }
  }
  // A (well, number) held by a tube not stated here cannot be given to another tube.
  const clashes = await tx<{ ord: string; holder: string }[]>`
    select i.ord, t.identifier::text as holder
    from registry_input i join tubes t on t.well_id = i.well_id and t.number = i.number
    where t.identifier <> i.identifier
      and not exists (select from registry_input other where other.identifier = t.identifier)
    order by i.ord`;
  for (const { ord, holder } of clashes) {
    const tube = tubes[Number(ord) - 1]!;
    conflicts.push({
      tube: Number(ord) - 1,
      field: 'number',
      reason: `well "${tube.wellName}" already has tube number "${tube.number}" with identifier ${holder}`,
    });
  }
  return conflicts;
}

async function upsertTubes(tx: TransactionSql): Promise<void> {
  // Tubes that change place first step aside, so that swaps and moves within the file do not trip
  // over unique (well_id, number), which PostgreSQL checks row by row.
  await tx`update tubes t set number = 'moving ' || t.identifier::text
    from registry_input i
    where t.identifier = i.identifier and (t.well_id, t.number) is distinct from (i.well_id, i.number)`;
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
}

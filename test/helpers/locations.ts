/**
 * sql/008_locations.sql on a migrated database, the same on plain PostgreSQL and on TimescaleDB: the
 * checks of locations and elevations, and which change times and versions a change of either moves
 * (discovery's) and which it leaves (a series', a network's, a sync token's view).
 */
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { currentSyncPoint } from '../../src/sync/sql.js';

interface Stamps {
  version: string;
  seriesVersion: string;
  seriesChangedAt: Date;
  elevationsChangedAt: Date | null;
  wellChangedAt: Date;
  locationChangedAt: Date | null;
}

export async function provesLocationColumns(t: Test, sql: Sql): Promise<void> {
  const [well] = await sql<{ id: number }[]>`
    insert into wells (name, longitude, latitude) values ('Located', 5.1, 52.0) returning id`;
  const [tube] = await sql<{ id: number }[]>`
    insert into tubes (identifier, well_id, number, ground_level, tube_top, screen_top, screen_bottom)
    values (gen_random_uuid(), ${well!.id}, '1', 1.5, 2.25, -3, -5) returning id`;
  const stamps = async (): Promise<Stamps> => {
    const [row] = await sql<Stamps[]>`
      select v.version::text as version, t.series_version::text as "seriesVersion",
             t.series_changed_at as "seriesChangedAt", t.elevations_changed_at as "elevationsChangedAt",
             w.changed_at as "wellChangedAt", w.location_changed_at as "locationChangedAt"
      from registry_version v, tubes t join wells w on w.id = t.well_id where t.id = ${tube!.id}`;
    return row!;
  };
  const view = async () => (await currentSyncPoint(sql, { allTubes: true, grants: new Set() })).view;

  t.test('a location is whole and in range; elevations are finite and in order', async (t) => {
    const refusedWells: [string, number | null, number | null][] = [
      ['wells_location_whole', 5, null],
      ['wells_location_whole', null, 52],
      ['wells_longitude_in_range', 180.000001, 0],
      ['wells_longitude_in_range', -181, 0],
      ['wells_latitude_in_range', 0, 90.5],
      ['wells_latitude_in_range', 0, Number.NaN],
      ['wells_longitude_in_range', Number.POSITIVE_INFINITY, 0],
    ];
    for (const [constraint, longitude, latitude] of refusedWells) {
      await t.rejects(
        sql`update wells set longitude = ${longitude}, latitude = ${latitude} where id = ${well!.id}`,
        { message: new RegExp(`violates check constraint "${constraint}"`) },
        `${longitude}, ${latitude}: ${constraint}`,
      );
    }
    for (const [longitude, latitude] of [
      [-180, -90],
      [180, 90],
    ]) {
      await sql`update wells set longitude = ${longitude!}, latitude = ${latitude!} where id = ${well!.id}`;
    }
    const refusedTubes: [string, string][] = [
      ['tubes_ground_level_finite', `ground_level = 'NaN'`],
      ['tubes_tube_top_finite', `tube_top = 'Infinity'`],
      ['tubes_screen_top_finite', `screen_top = 'Infinity', tube_top = null`],
      ['tubes_screen_bottom_finite', `screen_bottom = '-Infinity'`],
      ['tubes_screen_whole', 'screen_top = null'],
      ['tubes_screen_whole', 'screen_bottom = null'],
      ['tubes_screen_top_above_bottom', 'screen_top = -5'],
      ['tubes_screen_top_above_bottom', 'screen_bottom = -2'],
      ['tubes_tube_top_not_below_screen', 'tube_top = -3.5'],
    ];
    for (const [constraint, assignment] of refusedTubes) {
      await t.rejects(
        sql.unsafe(`update tubes set ${assignment} where id = ${tube!.id}`),
        { message: new RegExp(`violates check constraint "${constraint}"`) },
        `${assignment}: ${constraint}`,
      );
    }
    // Equal tube top and screen top is allowed (the screen starts at the top); unknown is always allowed.
    await sql`update tubes set tube_top = -3 where id = ${tube!.id}`;
    await sql`update tubes set tube_top = null, ground_level = null where id = ${tube!.id}`;
    await sql`update tubes set screen_top = null, screen_bottom = null where id = ${tube!.id}`;
    await sql`update wells set longitude = null, latitude = null where id = ${well!.id}`;
    await sql`update wells set longitude = 5.1, latitude = 52 where id = ${well!.id}`;
    await sql`update tubes set ground_level = 1.5, tube_top = 2.25, screen_top = -3, screen_bottom = -5
      where id = ${tube!.id}`;
  });

  t.test("an elevation's change moves discovery's, not the series' nor the token's view", async (t) => {
    const before = await stamps();
    const viewBefore = await view();
    await sql`update tubes set screen_bottom = -6 where id = ${tube!.id}`;
    const after = await stamps();
    t.not(after.version, before.version, 'the registry version');
    t.ok(after.elevationsChangedAt !== null && after.elevationsChangedAt > before.seriesChangedAt);
    t.equal(after.seriesVersion, before.seriesVersion, 'the series version stays');
    t.same(after.seriesChangedAt, before.seriesChangedAt, "the series' change time stays");
    t.ok(viewBefore.equals(await view()), "a sync token's view stays");
    await sql`update tubes set screen_bottom = -6 where id = ${tube!.id}`;
    t.same(await stamps(), after, 'the same value again moves nothing');
  });

  t.test("a location's change moves discovery's, not the network's nor the token's view", async (t) => {
    const before = await stamps();
    const viewBefore = await view();
    await sql`update wells set longitude = 5.2 where id = ${well!.id}`;
    const after = await stamps();
    t.not(after.version, before.version, 'the registry version');
    t.ok(after.locationChangedAt !== null && after.locationChangedAt > before.wellChangedAt);
    t.same(after.wellChangedAt, before.wellChangedAt, "the well's change time (its name's) stays");
    t.equal(after.seriesVersion, before.seriesVersion);
    t.ok(viewBefore.equals(await view()), "a sync token's view stays");
    await sql`update wells set longitude = 5.2 where id = ${well!.id}`;
    t.same(await stamps(), after, 'the same value again moves nothing');
  });
}

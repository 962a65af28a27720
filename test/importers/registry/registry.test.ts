import t from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import {
  RegistryRejected,
  type RegistryWell,
  upsertRegistry,
} from '../../../src/importers/registry/registry.js';
import { freshDatabase } from '../../helpers/database.js';

const A1 = '0a000000-0000-4000-8000-000000000001';
const A2 = '0a000000-0000-4000-8000-000000000002';
const B1 = '0b000000-0000-4000-8000-000000000001';

/** Every tube as "well/number identifier unit datum", in a stable order. */
async function tubeRows(sql: Sql): Promise<string[]> {
  const rows = await sql<{ row: string }[]>`
    select w.name || '/' || t.number || ' ' || t.identifier || ' ' || t.unit || ' ' || t.vertical_datum as row
    from tubes t join wells w on w.id = t.well_id order by w.name, t.number`;
  return rows.map((r) => r.row);
}

t.test('upsertRegistry inserts wells and tubes with defaults, then updates them in place', async (t) => {
  const { sql } = await freshDatabase(t);
  const counts = await upsertRegistry(sql, [
    {
      name: 'A',
      tubes: [
        { identifier: A1.toUpperCase(), number: '1' },
        { identifier: A2, number: '2' },
      ],
    },
    { name: 'B', tubes: [{ identifier: B1, number: '1', unit: 'cm', verticalDatum: 'MSL' }] },
  ]);
  t.same(counts, { wells: 2, tubes: 3 });
  t.same(await tubeRows(sql), [`A/1 ${A1} m NAP`, `A/2 ${A2} m NAP`, `B/1 ${B1} cm MSL`]);
  const [before] = await sql<{ id: number }[]>`select id from tubes where identifier = ${A1}`;

  // A1 moves to B as number 2 with a new unit; the swap of numbers 1 and 2 would collide row by row.
  await upsertRegistry(sql, [
    { name: 'B', tubes: [{ identifier: A1, number: '2', unit: 'cm' }] },
    { name: 'C', tubes: [] },
  ]);
  t.same(await tubeRows(sql), [`A/2 ${A2} m NAP`, `B/1 ${B1} cm MSL`, `B/2 ${A1} cm NAP`]);
  const [after] = await sql<{ id: number }[]>`select id from tubes where identifier = ${A1}`;
  t.equal(after?.id, before?.id, 'a moved tube keeps its internal id (and so its measurements and grants)');
  t.same(
    (await sql`select name from wells order by name`).map((r) => r.name),
    ['A', 'B', 'C'],
  );
});

t.test('tubes can swap numbers within one file', async (t) => {
  const { sql } = await freshDatabase(t);
  await upsertRegistry(sql, [
    {
      name: 'A',
      tubes: [
        { identifier: A1, number: '1' },
        { identifier: A2, number: '2' },
      ],
    },
  ]);
  await upsertRegistry(sql, [
    {
      name: 'A',
      tubes: [
        { identifier: A1, number: '2' },
        { identifier: A2, number: '1' },
      ],
    },
  ]);
  t.same(await tubeRows(sql), [`A/1 ${A2} m NAP`, `A/2 ${A1} m NAP`]);
});

t.test('a (well, number) held by an unlisted tube is refused and nothing is written', async (t) => {
  const { sql } = await freshDatabase(t);
  await upsertRegistry(sql, [{ name: 'A', tubes: [{ identifier: A1, number: '1' }] }]);
  const error = await upsertRegistry(sql, [
    { name: 'New', tubes: [] },
    { name: 'A', tubes: [{ identifier: A2, number: '1' }] },
  ]).catch((e: unknown) => e);
  t.ok(error instanceof RegistryRejected);
  t.same((error as RegistryRejected).issues, [
    {
      path: [1, 'tubes', 0, 'number'],
      reason: `well "A" already has tube number "1" with identifier ${A1}, which this file does not list`,
    },
  ]);
  t.same(await tubeRows(sql), [`A/1 ${A1} m NAP`]);
  t.same(
    (await sql`select name from wells`).map((r) => r.name),
    ['A'],
    'the new well was rolled back',
  );
});

/** Every well's location and every tube's elevations, as stored. */
async function placeRows(sql: Sql) {
  return [
    ...(await sql`
      select w.name, w.longitude, w.latitude, t.number, t.ground_level as "groundLevel",
             t.tube_top as "tubeTop", t.screen_top as "screenTop", t.screen_bottom as "screenBottom"
      from tubes t join wells w on w.id = t.well_id order by w.name, t.number`),
  ];
}

t.test('locations and elevations are written, and a listed well or tube is stated whole', async (t) => {
  const { sql } = await freshDatabase(t);
  const elevations = { groundLevel: 1.25, tubeTop: 2, screenTop: -3.5, screenBottom: -5 };
  const wellA: RegistryWell = {
    name: 'A',
    location: { longitude: 5.123456789012345, latitude: -52.5 },
    tubes: [
      { identifier: A1, number: '1', ...elevations },
      { identifier: A2, number: '2', tubeTop: -0.5 },
    ],
  };
  await upsertRegistry(sql, [wellA, { name: 'B', tubes: [{ identifier: B1, number: '1' }] }]);
  const unknown = { groundLevel: null, tubeTop: null, screenTop: null, screenBottom: null };
  t.same(await placeRows(sql), [
    { name: 'A', longitude: 5.123456789012345, latitude: -52.5, number: '1', ...elevations },
    { name: 'A', longitude: 5.123456789012345, latitude: -52.5, number: '2', ...unknown, tubeTop: -0.5 },
    { name: 'B', longitude: null, latitude: null, number: '1', ...unknown },
  ]);
  const version = async () => (await sql`select version::text from registry_version`)[0]!.version;
  const before = await version();
  await upsertRegistry(sql, [wellA]);
  t.equal(await version(), before, 'the same file again changes nothing');
  // A's location and A1's elevations left out: unknown now. B is not listed: kept as it is.
  await upsertRegistry(sql, [
    {
      name: 'A',
      tubes: [
        { identifier: A1, number: '1' },
        { identifier: A2, number: '2', screenTop: 1, screenBottom: 0 },
      ],
    },
    { name: 'B', location: { longitude: -180, latitude: 90 }, tubes: [] },
  ]);
  t.same(await placeRows(sql), [
    { name: 'A', longitude: null, latitude: null, number: '1', ...unknown },
    { name: 'A', longitude: null, latitude: null, number: '2', ...unknown, screenTop: 1, screenBottom: 0 },
    { name: 'B', longitude: -180, latitude: 90, number: '1', ...unknown },
  ]);
});

t.test('elevations out of order are refused with their paths, and nothing is written', async (t) => {
  const { sql } = await freshDatabase(t);
  const error = await upsertRegistry(sql, [
    {
      name: 'A',
      location: { longitude: -180.1, latitude: 0 },
      tubes: [{ identifier: A1, number: '1', screenTop: 0, screenBottom: 1, tubeTop: -1 }],
    },
  ]).catch((e: unknown) => e);
  t.ok(error instanceof RegistryRejected);
  t.same((error as RegistryRejected).issues, [
    { path: [0, 'location', 'longitude'], reason: 'must be within [-180, 180]' },
    { path: [0, 'tubes', 0, 'screenTop'], reason: 'must be above screenBottom (1)' },
    { path: [0, 'tubes', 0, 'tubeTop'], reason: 'must not be below screenTop (0)' },
  ]);
  t.same(await sql`select * from wells`, [], 'nothing written');
});

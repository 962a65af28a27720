/**
 * A registry with locations and elevations for the tests of `bbox` and GeoJSON: wells inside, on the
 * edge of and outside one box, one without a location, and wells inside the box that mix readable and
 * hidden tubes or are hidden whole; keys that read some of them, only wells outside the box, or nothing.
 */
import type { Sql } from '../../src/db/connect.js';
import { type RegistryWell, upsertRegistry } from '../../src/importers/registry/registry.js';
import { addKey, type KeyFixture } from '../../testkit/fixtures.js';

/** minLon,minLat,maxLon,maxLat: Amstel 10 lies on its south-east corner. */
export const BOX = '4,52,5,52.5';

const id = (n: number) => `0c000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
export const TUBES = {
  amstel1a: id(1),
  amstel1b: id(2),
  amstel10: id(3),
  maas: id(4),
  nowhere: id(5),
  mixedReadable: id(6),
  mixedHidden: id(7),
  hidden: id(8),
} as const;

export const LOCATED_WELLS: RegistryWell[] = [
  {
    name: 'Amstel 1',
    location: { longitude: 4.9, latitude: 52.37 },
    tubes: [
      {
        identifier: TUBES.amstel1a,
        number: '1',
        groundLevel: -0.42,
        tubeTop: 0.31,
        screenTop: -7.5,
        screenBottom: -8.5,
      },
      { identifier: TUBES.amstel1b, number: '2', groundLevel: -0.42 },
    ],
  },
  {
    name: 'Amstel 10',
    location: { longitude: 5, latitude: 52 },
    tubes: [{ identifier: TUBES.amstel10, number: '1', unit: 'cm', verticalDatum: 'MSL', tubeTop: 120 }],
  },
  {
    name: 'Maas 3',
    location: { longitude: 5.7, latitude: 50.85 },
    tubes: [{ identifier: TUBES.maas, number: '1' }],
  },
  { name: 'Nowhere', tubes: [{ identifier: TUBES.nowhere, number: '1' }] },
  {
    name: 'Mixed',
    location: { longitude: 4.5, latitude: 52.1 },
    tubes: [
      { identifier: TUBES.mixedReadable, number: '1' },
      { identifier: TUBES.mixedHidden, number: '2', screenTop: -3, screenBottom: -4 },
    ],
  },
  {
    name: 'Hidden',
    location: { longitude: 4.6, latitude: 52.2 },
    tubes: [{ identifier: TUBES.hidden, number: '1' }],
  },
];

/** What the reader may read: everything but the hidden well and the hidden tube of Mixed. */
export const READABLE = [
  TUBES.amstel1a,
  TUBES.amstel1b,
  TUBES.amstel10,
  TUBES.maas,
  TUBES.nowhere,
  TUBES.mixedReadable,
];

export interface LocatedKeys {
  all: KeyFixture;
  reader: KeyFixture;
  /** Reads only Maas 3, outside the box. */
  outsider: KeyFixture;
  /** Reads nothing at all. */
  none: KeyFixture;
}

export async function seedLocatedWells(
  sql: Sql,
): Promise<{ keys: LocatedKeys; tubeIds: Map<string, number> }> {
  await upsertRegistry(sql, LOCATED_WELLS);
  const rows = await sql<{ id: number; identifier: string }[]>`select id, identifier::text from tubes`;
  const tubeIds = new Map(rows.map((row) => [row.identifier, row.id]));
  const ids = (identifiers: readonly string[]) => identifiers.map((identifier) => tubeIds.get(identifier)!);
  return {
    tubeIds,
    keys: {
      all: await addKey(sql, { allTubes: true }),
      reader: await addKey(sql, { tubeIds: ids(READABLE) }),
      outsider: await addKey(sql, { tubeIds: ids([TUBES.maas]) }),
      none: await addKey(sql),
    },
  };
}

/**
 * `gwapi import dino` as the operator runs it, read back over HTTP as a client reads it: discovery and
 * its GeoJSON show each well where the file puts it with its tube's elevations; the series, latest and a
 * sync delta show each level, time and status; a second import changes nothing; a bad file is refused
 * whole, with the files before it imported whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { formatImportWorld } from '../../../helpers/formatImport.js';
import { approximateWgs84, FIXTURES, metresBetween, pythonUuid5 } from '../readerSink.js';

const dino = (name: string) => join(FIXTURES, 'dino', name);
const PERIODS = dino('B32C0211001_1.csv');
const QUOTED = dino('B44F0310001.csv');
const NO_METADATA = dino('B27D0188002_1.csv');

const [B32C0211, B44F0310, B27D0188] = pythonUuid5(
  'urn:dino:B32C0211:001',
  'urn:dino:B44F0310:001',
  'urn:dino:B27D0188:002',
) as [string, string, string];

/** The years the fixtures' levels fall in: a request covers at most 366 days. */
const YEARS = Array.from({ length: 2025 - 1987 }, (_, i) => 1987 + i);
const yearOf = (year: number): [string, string] => [`${year}-01-01T00:00:00Z`, `${year + 1}-01-01T00:00:00Z`];

/** What `read` gives over every year of the fixtures, one request a year. */
async function overYears<T>(read: (from: string, to: string) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (const year of YEARS) all.push(...(await read(...yearOf(year))));
  return all;
}

t.test('three DINO files, end to end', async (t) => {
  const world = await formatImportWorld(t);
  const first = await world.gwapi(['dino', PERIODS, QUOTED, NO_METADATA]);
  t.equal(first.code, 0, first.stderr);
  t.match(
    first.stdout,
    '1 tube stated; 6 points read: 4 provisional written; 1 no NAP level, 1 duplicate time',
  );
  t.match(
    first.stdout,
    '1 tube stated; 3 points read: 3 provisional written; screen left out (one bound only) of 1 tube',
  );
  t.match(first.stdout, '1 tube stated; 3 points read: 2 provisional written; 1 no NAP level');

  const wells = await world.wells();
  const tube = { number: '001', unit: 'm', verticalDatum: 'NAP' };
  t.same(
    wells.map(({ name, tubes }) => ({ name, tubes })),
    [
      { name: 'B27D0188', tubes: [{ ...tube, identifier: B27D0188, number: '002' }] },
      {
        name: 'B32C0211',
        tubes: [
          {
            ...tube,
            identifier: B32C0211,
            groundLevel: -1.48,
            tubeTop: -0.91,
            screenTop: -3.12,
            screenBottom: -4.12,
          },
        ],
      },
      { name: 'B44F0310', tubes: [{ ...tube, identifier: B44F0310, groundLevel: 10.42, tubeTop: 10.98 }] },
    ],
    "the latest Startdatum's period; a screen with one bound left out; no metadata row: no elevations",
  );
  const located = (name: string) => wells.find((well) => well.name === name)?.location ?? null;
  t.equal(located('B27D0188'), null, 'a file without a metadata row: no location');
  for (const [name, x, y] of [
    ['B32C0211', 136_420, 487_310],
    ['B44F0310', 203_480, 427_150],
  ] as const) {
    const [longitude, latitude] = located(name)!.coordinates;
    t.ok(
      metresBetween({ longitude, latitude }, approximateWgs84(x, y)) < 1.5,
      `${name}: RD ${x} ${y} in WGS 84`,
    );
  }
  const features = (await world.wellsGeoJson()).features as {
    geometry: { coordinates: [number, number] } | null;
    properties: { name: string };
  }[];
  t.same(
    features.map((feature) => [feature.properties.name, feature.geometry?.coordinates ?? null]),
    ['B27D0188', 'B32C0211', 'B44F0310'].map((name) => [name, located(name)?.coordinates ?? null]),
    'GeoJSON places them alike',
  );

  t.same(
    await overYears((from, to) => world.series(B32C0211, from, to)),
    [
      { observedAt: '1998-01-13T23:00:00Z', value: -2.1, status: 'provisional' },
      { observedAt: '1998-01-27T23:00:00Z', value: -2.03, status: 'provisional' },
      { observedAt: '2019-07-13T22:00:00Z', value: -1.92, status: 'provisional' },
      { observedAt: '2024-02-27T23:00:00Z', value: -1.88, status: 'provisional' },
    ],
    'centimetres as metres; midnight in Europe/Amsterdam; of two rows of one date, the later',
  );
  t.same(await overYears((from, to) => world.series(B44F0310, from, to)), [
    { observedAt: '1987-06-11T22:00:00Z', value: 9.38, status: 'provisional' },
    { observedAt: '1987-06-25T22:00:00Z', value: 9.27, status: 'provisional' },
    { observedAt: '2023-11-13T23:00:00Z', value: 9.46, status: 'provisional' },
  ]);
  t.same(
    await world.statedLatest(),
    [
      { tubeIdentifier: B27D0188, observedAt: '2002-03-29T23:00:00Z', value: 12.09, status: 'provisional' },
      { tubeIdentifier: B32C0211, observedAt: '2024-02-27T23:00:00Z', value: -1.88, status: 'provisional' },
      { tubeIdentifier: B44F0310, observedAt: '2023-11-13T23:00:00Z', value: 9.46, status: 'provisional' },
    ].sort((a, b) => a.tubeIdentifier.localeCompare(b.tubeIdentifier)),
    'latest with statuses',
  );

  const { syncToken } = await world.network(...yearOf(2024));
  const network = (await overYears(async (from, to) => (await world.network(from, to)).series)).filter(
    (series) => series.measurements.length > 0,
  );
  t.same(
    network.map(({ tubeIdentifier, measurements }) => [tubeIdentifier, measurements.length]).sort(),
    [
      [B27D0188, 2],
      [B32C0211, 2],
      [B32C0211, 1],
      [B32C0211, 1],
      [B44F0310, 2],
      [B44F0310, 1],
    ].sort(),
    'the network, a year at a time',
  );
  const changes = async () =>
    (await world.api.db.sql`select count(*)::int as n from measurement_changes`)[0]?.n as number;
  const changesBefore = await changes();
  const again = await world.gwapi(['dino', PERIODS, QUOTED, NO_METADATA]);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, '6 points read: nothing written, 4 unchanged', 'a second import changes nothing');
  t.match(again.stdout, '3 points read: nothing written, 3 unchanged');
  t.match(again.stdout, '3 points read: nothing written, 2 unchanged');
  t.equal(await changes(), changesBefore, 'nor the change log');
  t.same(
    await overYears(async (from, to) => (await world.network(from, to, syncToken)).series),
    [],
    'an empty delta',
  );
  t.same(
    (await world.wells()).map(({ name, tubes }) => ({ name, tubes })),
    wells.map(({ name, tubes }) => ({ name, tubes })),
    'nor the registry',
  );
});

t.test('--timezone and --status', async (t) => {
  const world = await formatImportWorld(t);
  t.equal((await world.gwapi(['dino', QUOTED])).code, 0);
  const result = await world.gwapi(['dino', QUOTED, '--timezone', 'UTC', '--status', 'approved']);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, '3 points read: 3 approved written; screen left out (one bound only) of 1 tube');
  t.same(
    await overYears((from, to) => world.series(B44F0310, from, to)),
    [
      { observedAt: '1987-06-11T22:00:00Z', value: 9.38, status: 'provisional' },
      { observedAt: '1987-06-12T00:00:00Z', value: 9.38, status: 'approved' },
      { observedAt: '1987-06-25T22:00:00Z', value: 9.27, status: 'provisional' },
      { observedAt: '1987-06-26T00:00:00Z', value: 9.27, status: 'approved' },
      { observedAt: '2023-11-13T23:00:00Z', value: 9.46, status: 'provisional' },
      { observedAt: '2023-11-14T00:00:00Z', value: 9.46, status: 'approved' },
    ],
    'midnight in UTC is another instant than midnight in Amsterdam: three more levels',
  );
  const wrongZone = await world.gwapi(['dino', QUOTED, '--timezone', 'Europe/Nowhere']);
  t.not(wrongZone.code, 0);
  t.match(wrongZone.stderr, /--timezone.*Europe\/Nowhere.* invalid/, 'an unknown time zone is refused');
});

t.test('bad files: refused whole, the files before them imported whole', async (t) => {
  const world = await formatImportWorld(t);
  const periods = readFileSync(PERIODS, 'utf8');
  const directory = t.testdir();
  const file = (name: string, text: string) => {
    const path = join(directory, name);
    writeFileSync(path, text);
    return path;
  };
  const cases: [string, string][] = [
    [
      file('truncated_1.csv', periods.slice(0, periods.indexOf(',-192'))),
      ':22: row: has 5 fields where the header names 8 (is the file cut off?)',
    ],
    [join(FIXTURES, 'bro', 'GLD000000012893_objectsAsCsv.csv'), ':1: row: not a DINO groundwater-level file'],
    [
      file('not-a-number_1.csv', periods.replace(',-192,', ',n.b.,')),
      ':22: Stand (cm t.o.v. NAP): "n.b.": not a decimal number',
    ],
    [
      file('time-without-date_1.csv', periods.replace('14-07-2019', '12:00')),
      ':22: Peildatum: "12:00": not a date',
    ],
    [
      file('metres_1.csv', periods.replace('Stand (cm t.o.v. NAP)', 'Stand (m t.o.v. NAP)')),
      ':18: Stand (cm t.o.v. NAP): unit "m": DINO states levels in cm',
    ],
  ];
  const first = await world.gwapi(['dino', NO_METADATA, cases[2]![0]]);
  t.equal(first.code, 1);
  t.match(first.stdout, '3 points read: 2 provisional written', 'the file before it, whole');
  const token = (await world.network(...yearOf(2002))).syncToken;
  for (const [path, error] of cases) {
    const result = await world.gwapi(['dino', NO_METADATA, path]);
    t.not(result.code, 0, `${path}: exit non-zero`);
    t.match(result.stderr, `${path}${error}`, `${path}: its name, line, field and reason`);
    t.match(
      result.stdout,
      '3 points read: nothing written, 2 unchanged',
      `${path}: the file before it imported`,
    );
    t.same(
      (await world.wells()).map((well) => well.name),
      ['B27D0188'],
      `${path}: nothing of it in discovery`,
    );
    t.same(
      await overYears(async (from, to) => (await world.network(from, to, token)).series),
      [],
      `${path}: nothing of it in a delta`,
    );
  }
  t.same(await world.changedTubes(), [B27D0188], 'the change log holds the good file only');
});

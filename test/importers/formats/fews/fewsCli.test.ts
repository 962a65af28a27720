/**
 * `gwapi import fews` as the operator runs it, read back over HTTP as a client reads it: discovery and
 * its GeoJSON, the series, latest and a sync delta show what the PI-XML files state; a second import
 * changes nothing; a bad file is refused whole, with the files before it imported whole.
 */
import t from 'tap';
import { formatImportWorld } from '../../../helpers/formatImport.js';
import { metresBetween, pythonUuid5 } from '../readerSink.js';
import { FEWS_LUNETTEN, fixture, LUNETTEN_LEVELS, VLEUTEN_LEVELS } from './fixtures.js';

const [LUNETTEN, VLEUTEN, ZEEEN] = pythonUuid5(
  'urn:fews:PP-Lunetten-101',
  'urn:fews:Vleuten peilbuis 2',
  'urn:fews:PP-Zeeën-3',
) as [string, string, string];

interface StatedLatest {
  tubeIdentifier: string;
  observedAt: string;
  value: number;
  status: string;
}

const FROM = '2023-12-01T00:00:00Z';
const TO = '2024-02-01T00:00:00Z';

t.test('a PI-XML file of two locations, end to end', async (t) => {
  const world = await formatImportWorld(t);
  const first = await world.gwapi(['fews', fixture('levels-mnap.xml')]);
  t.equal(first.code, 0, first.stderr);
  t.match(
    first.stdout,
    '2 tubes stated; 20 points read: 10 provisional and 3 rejected written; ' +
      '1 flag 9 (missing) value, 3 missing values, ' +
      '3 mm values: locationId PP-Lunetten-101, parameterId P.meting',
  );

  const wells = await world.wells();
  t.same(
    wells.map(({ name, tubes }) => ({ name, tubes })),
    [
      {
        name: 'PP-Lunetten-101',
        tubes: [{ identifier: LUNETTEN, number: '1', unit: 'm', verticalDatum: 'NAP' }],
      },
      {
        name: 'Vleuten peilbuis 2',
        tubes: [{ identifier: VLEUTEN, number: '1', unit: 'm', verticalDatum: 'NAP' }],
      },
    ],
    'a well per locationId, its tube 1 in metres relative to NAP, identified by uuid5(urn:fews:{locationId})',
  );
  const at = (name: string) => wells.find((well) => well.name === name)?.location?.coordinates;
  const lunetten = at('PP-Lunetten-101')!;
  t.ok(
    metresBetween({ longitude: lunetten[0], latitude: lunetten[1] }, FEWS_LUNETTEN) < 1,
    'RD x/y within 1 m of where FEWS puts it',
  );
  t.same(at('Vleuten peilbuis 2'), [5.185924, 52.104488], 'lat/lon as the header gives them');
  const features = (await world.wellsGeoJson()).features as {
    geometry: { coordinates: [number, number] };
    properties: { name: string };
  }[];
  t.same(
    features.map((feature) => [feature.properties.name, feature.geometry.coordinates]),
    [
      ['PP-Lunetten-101', lunetten],
      ['Vleuten peilbuis 2', [5.185924, 52.104488]],
    ],
    'GeoJSON places them alike',
  );

  t.same(
    await world.series(LUNETTEN, FROM, TO),
    LUNETTEN_LEVELS,
    'the series: UTC times, 15 digits, flags as statuses',
  );
  t.same(await world.series(VLEUTEN, FROM, TO), VLEUTEN_LEVELS);
  t.same(
    ((await world.latest()) as StatedLatest[]).map(({ tubeIdentifier, observedAt, value, status }) => ({
      tubeIdentifier,
      observedAt,
      value,
      status,
    })),
    [
      { tubeIdentifier: LUNETTEN, observedAt: '2024-01-15T23:30:00Z', value: -0.401, status: 'provisional' },
      { tubeIdentifier: VLEUTEN, observedAt: '2024-01-15T11:00:00Z', value: 1.017, status: 'provisional' },
    ],
    'latest with statuses',
  );

  const before = await world.network(FROM, TO);
  t.same(
    before.series.map(({ tubeIdentifier, measurements }) => [tubeIdentifier, measurements.length]),
    [
      [LUNETTEN, 10],
      [VLEUTEN, 3],
    ],
  );
  const changes = async () =>
    (await world.api.db.sql`select count(*)::int as n from measurement_changes`)[0]?.n as number;
  const changesBefore = await changes();

  const again = await world.gwapi(['fews', fixture('levels-mnap.xml')]);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, '20 points read: nothing written, 13 unchanged', 'a second import changes nothing');
  t.equal(await changes(), changesBefore, 'nor the change log');
  t.same((await world.network(FROM, TO, before.syncToken)).series, [], 'an empty delta');

  const later = await world.gwapi(['fews', fixture('levels-mnap-later.xml')]);
  t.equal(later.code, 0, later.stderr);
  t.same(
    (await world.network(FROM, TO, before.syncToken)).series.map(({ tubeIdentifier, measurements }) => ({
      tubeIdentifier,
      measurements,
    })),
    [
      {
        tubeIdentifier: LUNETTEN,
        measurements: [
          { observedAt: '2024-01-15T08:00:00Z', value: -0.414, status: 'rejected' },
          { observedAt: '2024-01-16T00:00:00Z', value: -0.399, status: 'provisional' },
          { observedAt: '2024-01-16T01:00:00Z', value: -0.398, status: 'provisional' },
        ],
      },
      {
        tubeIdentifier: VLEUTEN,
        measurements: [{ observedAt: '2024-01-16T08:00:00Z', value: 1.012, status: 'provisional' }],
      },
    ],
    "a later export: the delta holds its levels and the status FEWS's review changed, nothing else",
  );
});

t.test('plain m: the datum of --datum; x/y outside RD: no location', async (t) => {
  const world = await formatImportWorld(t);
  const result = await world.gwapi(['fews', fixture('levels-m.xml'), '--datum', 'MSL']);
  t.equal(result.code, 0, result.stderr);
  const [well, ...others] = await world.wells();
  t.same(others, []);
  t.same(well?.tubes, [{ identifier: ZEEEN, number: '1', unit: 'm', verticalDatum: 'MSL' }]);
  t.same(well?.location ?? null, null, 'x/y in WGS 1984 state no location');
  t.same(
    await world.series(ZEEEN, FROM, TO),
    [
      { observedAt: '2024-01-01T01:30:00Z', value: -1.25, status: 'provisional' },
      { observedAt: '2024-01-02T01:30:00Z', value: -1.5, status: 'rejected' },
    ],
    '<timeZone>-5.5</timeZone>: five and a half hours west of UTC',
  );
});

t.test('--parameter: only the series named', async (t) => {
  const world = await formatImportWorld(t);
  const result = await world.gwapi(['fews', fixture('levels-mnap.xml'), '--parameter', 'GW.meting']);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, '4 unselected-parameter values');
  t.same(
    (await world.series(VLEUTEN, FROM, TO)).map(({ observedAt }) => observedAt),
    ['2024-01-15T08:00:00Z', '2024-01-15T09:00:00Z'],
    'not the GW.handmeting series of the same location',
  );
});

t.test('bad files: refused whole, the files before them imported whole', async (t) => {
  const world = await formatImportWorld(t);
  const cases: [string, string][] = [
    ['truncated.xml', ':25: TimeSeries/series[1]: XML: unclosed tag: series: the file ends before it closes'],
    ['not-a-number.xml', ':22: TimeSeries/series[1]/event[2]: value: "-0,412" is not a number'],
    ['time-without-date.xml', ':23: TimeSeries/series[1]/event[3]: date: the event has no date'],
    [
      'measurements.csv',
      ':1: XML: not XML: the file starts with "tubeIdentifier,observedAt,value", not "<": `gwapi import fews` reads Delft-FEWS PI-XML',
    ],
    ['locations.xml', ':2: Locations: Locations: the root element is Locations, not TimeSeries'],
    ['rainfall.xml', ':33: TimeSeries: series: no series in metres (m, mNAP): locationId KNMI-260'],
  ];
  const first = await world.gwapi(['fews', fixture('levels-m.xml'), fixture('not-a-number.xml')]);
  t.equal(first.code, 1);
  t.match(first.stdout, '2 points read: 1 provisional and 1 rejected written', 'the file before it, whole');
  t.equal((await world.series(ZEEEN, FROM, TO)).length, 2);
  const token = (await world.network(FROM, TO)).syncToken;
  for (const [name, error] of cases) {
    const result = await world.gwapi(['fews', fixture('levels-m.xml'), fixture(name)]);
    t.not(result.code, 0, `${name}: exit non-zero`);
    t.match(result.stderr, `${fixture(name)}${error}`, `${name}: its name, line, element path and reason`);
    t.same(
      (await world.wells()).map((well) => well.name),
      ['PP-Zeeën-3'],
      `${name}: nothing of it in discovery`,
    );
    t.match(
      result.stdout,
      '2 points read: nothing written, 2 unchanged',
      `${name}: the file before it imported`,
    );
    t.same((await world.network(FROM, TO, token)).series, [], `${name}: nothing of it in a delta`);
  }
  const tubesInLog = await world.api.db.sql`
    select distinct tubes.identifier::text as tube
    from measurement_changes join tubes on tubes.id = measurement_changes.tube_id`;
  t.same(
    tubesInLog.map((row) => row.tube),
    [ZEEEN],
    'nor in the change log',
  );
});

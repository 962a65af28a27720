/**
 * `gwapi import bro-gmw` and `bro-gld` of BRO XML as an operator runs them, read back over HTTP as a
 * client reads them: wells where the files put them, tubes with their elevations, each level with its
 * time and status, the same tube from GMW and GLD, and a second import that changes nothing.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { rdToWgs84 } from '../../../../src/importers/formats/projection.js';
import { formatImportWorld } from '../../../helpers/formatImport.js';
import { FIXTURES } from '../readerSink.js';
import { fixture, pythonUuid5 } from './readAll.js';

const path = (name: string) => join(FIXTURES, 'bro', name);
const [TUBE_1, TUBE_2, PB_1, PB_2] = pythonUuid5(
  'urn:bro:gmw:GMW000000036287:1',
  'urn:bro:gmw:GMW000000036287:2',
  'urn:bro:gmw:PB-OH-07:1',
  'urn:bro:gmw:PB-OH-07:2',
) as [string, string, string, string];
/** A request spans at most 366 days: the dispatches' levels lie in the first window, the addition's later. */
const FROM = '2023-12-01T00:00:00Z';
const TO = '2024-12-01T00:00:00Z';
const LATER = ['2025-01-01T00:00:00Z', '2025-12-01T00:00:00Z'] as const;

/** The line (from 1) of the first `needle` in `text`. */
const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;

t.test('GMW then GLD XML, read back as a client; again: nothing changes', async (t) => {
  const world = await formatImportWorld(t);

  let run = await world.gwapi(['bro-gmw', path('gmw-dispatch.xml'), path('gmw-registration.xml')]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /gmw-dispatch\.xml: 2 tubes stated; 0 points read/);
  t.match(run.stdout, /gmw-registration\.xml: 2 tubes stated; 0 points read/);

  const wells = await world.wells();
  const pb = rdToWgs84(187512.43, 430228.91);
  t.same(
    wells.map((well) => [well.name, well.location]),
    [
      ['GMW000000036287', { type: 'Point', coordinates: [4.85343324, 51.94514556] }],
      ['PB-OH-07', { type: 'Point', coordinates: [pb.longitude, pb.latitude] }],
    ].sort(),
    "a dispatch's standardizedLocation; a registration's RD location converted",
  );
  const tubes = Object.fromEntries(
    wells.flatMap((well) => well.tubes.map((tube) => [tube.identifier, tube])),
  );
  const tube = (
    number: string,
    groundLevel: number,
    tubeTop: number,
    screenTop: number,
    screenBottom: number,
  ) => ({
    number,
    unit: 'm',
    verticalDatum: 'NAP',
    groundLevel,
    tubeTop,
    screenTop,
    screenBottom,
  });
  t.match(tubes[TUBE_1], tube('1', 1.932, 1.802, 0.142, -0.858));
  t.match(tubes[TUBE_2], tube('2', 1.932, 1.795, -7.205, -9.205));
  t.match(tubes[PB_1], tube('1', 3.18, 3.42, -3.22, -4.22), 'the screen of a registration, from its lengths');
  t.match(tubes[PB_2], tube('2', 3.18, 3.4, -8.5, -10.5));
  const features = (await world.wellsGeoJson()).features as { geometry: { coordinates: number[] } }[];
  t.same(
    features.map((feature) => feature.geometry.coordinates).sort(),
    [
      [4.85343324, 51.94514556],
      [pb.longitude, pb.latitude],
    ].sort(),
  );

  const { syncToken } = await world.network(FROM, TO);
  run = await world.gwapi(['bro-gld', path('gld-dispatch.xml'), path('gld-dispatch-soap.xml')]);
  t.equal(run.code, 0, run.stderr);
  t.match(
    run.stdout,
    'gld-dispatch.xml: 10 points read: 1 approved, 3 provisional and 1 rejected written; ' +
      '2 missing values, 1 control reading, 2 duplicate times',
  );
  t.match(run.stdout, 'gld-dispatch-soap.xml: 3 points read: 2 approved and 1 rejected written');
  run = await world.gwapi(['bro-gld', '--tube', PB_1, path('gld-addition.xml')]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, 'gld-addition.xml: 3 points read: 2 provisional and 1 rejected written');

  const tube1 = [
    { observedAt: '2023-12-31T23:00:00Z', value: 0.671, status: 'approved' },
    { observedAt: '2024-01-01T23:00:00Z', value: 0.655, status: 'rejected' },
    { observedAt: '2024-01-03T23:00:00Z', value: 0.702, status: 'provisional' },
    { observedAt: '2024-01-04T23:00:00Z', value: 0.72, status: 'provisional' },
    { observedAt: '2024-07-01T10:00:00Z', value: -0.125, status: 'provisional' },
  ];
  const tube2 = [
    { observedAt: '2024-06-01T06:00:00Z', value: -1.234, status: 'approved' },
    { observedAt: '2024-06-02T06:00:00Z', value: -1.241, status: 'approved' },
    { observedAt: '2024-06-03T06:00:00Z', value: -1.25, status: 'rejected' },
  ];
  const pb1 = [
    { observedAt: '2025-04-30T22:00:00Z', value: -3.105, status: 'provisional' },
    { observedAt: '2025-05-01T22:00:00Z', value: -3.118, status: 'provisional' },
    { observedAt: '2025-05-02T22:00:00Z', value: -9.87, status: 'rejected' },
  ];
  t.same(
    await world.series(TUBE_1, FROM, TO),
    tube1,
    'the GMW tube holds the GLD levels: volledigBeoordeeld over voorlopig, then the later resultTime, ' +
      'each against the order of the file; ' +
      'nil points and the controlemeting left out; 0.6709999999999999 is 0.671',
  );
  t.same(await world.series(TUBE_2, FROM, TO), tube2, 'the SOAP dispatch: +02:00 taken off');
  t.same(await world.series(PB_1, ...LATER), pb1, 'a GLD_Addition on the --tube');
  t.same(await world.series(PB_2, ...LATER), []);

  const latest = (await world.latest()) as {
    tubeIdentifier: string;
    observedAt: string;
    value: number;
    status: string;
  }[];
  t.same(
    latest
      .map(({ tubeIdentifier, observedAt, value, status }) => [tubeIdentifier, observedAt, value, status])
      .sort(),
    [
      [TUBE_1, '2024-07-01T10:00:00Z', -0.125, 'provisional'],
      [TUBE_2, '2024-06-03T06:00:00Z', -1.25, 'rejected'],
      [PB_1, '2025-05-02T22:00:00Z', -9.87, 'rejected'],
    ].sort(),
  );

  const delta = await world.network(FROM, TO, syncToken);
  const byTube = Object.fromEntries(
    delta.series.map((series) => [series.tubeIdentifier, series.measurements]),
  );
  t.same(byTube, { [TUBE_1]: tube1, [TUBE_2]: tube2 }, 'the delta since before the GLD imports');

  run = await world.gwapi(['bro-gmw', path('gmw-dispatch-soap.xml'), path('gmw-registration.xml')]);
  t.equal(run.code, 0, run.stderr);
  run = await world.gwapi(['bro-gld', path('gld-dispatch.xml'), path('gld-dispatch-soap.xml')]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, 'gld-dispatch.xml: 10 points read: nothing written, 5 unchanged');
  t.match(run.stdout, 'gld-dispatch-soap.xml: 3 points read: nothing written, 3 unchanged');
  run = await world.gwapi(['bro-gld', '--tube', PB_1, path('gld-addition.xml')]);
  t.match(run.stdout, 'gld-addition.xml: 3 points read: nothing written, 3 unchanged');
  t.same(await world.wells(), wells, 'the same wells and tubes');
  t.same(await world.series(TUBE_1, FROM, TO), tube1);
  const again = await world.network(FROM, TO, delta.syncToken);
  t.same(again.series, [], 'an empty delta');
});

t.test(
  'refused files: one error with the file, line and element path; nothing of them, the files before whole',
  async (t) => {
    const world = await formatImportWorld(t);
    const directory = t.testdir();
    const variant = async (name: string, text: string) => {
      const file = join(directory, name);
      await writeFile(file, text);
      return file;
    };
    const gmw = fixture('gmw-registration.xml');
    const gld = fixture('gld-dispatch-soap.xml');

    const truncated = gmw.slice(0, gmw.indexOf('<ns:tubeNumber>2') + 16);
    const gmwCases = [
      [
        'truncated.xml',
        truncated,
        lineOf(gmw, '<ns:tubeNumber>2'),
        /ns:GMW_Construction\/ns:monitoringTube: ns:tubeNumber: the file ends before this element closes/,
      ],
      [
        'gld.xml',
        fixture('gld-dispatch.xml'),
        2,
        /:2: ns11:dispatchDataResponse: is a BRO dsgld message.*gwapi import bro-gld/,
      ],
      [
        'not-a-number.xml',
        gmw.replace('>3.40<', '>3,40<'),
        lineOf(gmw, '>3.40<'),
        /ns:monitoringTube: ns:tubeTopPosition: "3,40": not a decimal number/,
      ],
      [
        'centimetres.xml',
        gmw.replace('<ns:tubeTopPosition uom="m">3.40', '<ns:tubeTopPosition uom="cm">340'),
        lineOf(gmw, '>3.40<'),
        /ns:tubeTopPosition: unit "cm" is not read/,
      ],
    ] as const;
    for (const [name, text, line, error] of gmwCases) {
      const bad = await variant(`gmw-${name}`, text);
      const run = await world.gwapi(['bro-gmw', path('gmw-dispatch.xml'), bad]);
      t.not(run.code, 0, `gmw-${name}: the command fails`);
      t.match(run.stderr, `${bad}:${line}: `, 'the file and line are named');
      t.match(run.stderr, error);
      t.match(run.stdout, /gmw-dispatch\.xml: 2 tubes stated/, 'the file before it imported');
      t.same(
        (await world.wells()).map((well) => well.name),
        ['GMW000000036287'],
        'nothing of the refused file',
      );
    }

    const { syncToken } = await world.network(FROM, TO);
    const gldCases = [
      [
        'truncated.xml',
        gld.slice(0, gld.indexOf('-1.250')),
        /: .*waterml:MeasurementTVP: waterml:value: the file ends before/,
      ],
      [
        'gmw.xml',
        fixture('gmw-dispatch-soap.xml'),
        /:5: .*ns11:dispatchDataResponse: is a BRO dsgmw message/,
      ],
      [
        'csv-as-xml.xml',
        '<?xml version="1.0"?>\n<TimeSeries xmlns="http://www.wldelft.nl/fews/PI"/>\n',
        /:2: TimeSeries: is <TimeSeries> in http:\/\/www\.wldelft\.nl\/fews\/PI/,
      ],
      [
        'not-a-number.xml',
        gld.replace('>-1.250<', '>-1.25O<'),
        /waterml:value: "-1\.25O": not a decimal number/,
      ],
      [
        'no-date.xml',
        gld.replace('>2024-06-03T08:00:00+02:00<', '>08:00:00+02:00<'),
        /waterml:time: "08:00:00\+02:00" must be an RFC 3339 date-time/,
      ],
      [
        'centimetres.xml',
        gld.replace('<waterml:value uom="m">-1.250', '<waterml:value uom="cm">-125'),
        /waterml:value: unit "cm" is not read/,
      ],
      [
        'unregistered.xml',
        gld.replace('GMW000000036287', 'GMW000000036288'),
        /tube: no tube [0-9a-f-]{36} is registered \(\d levels of it from this line on\): import the file that describes it first/,
      ],
    ] as const;
    for (const [name, text, error] of gldCases) {
      const bad = await variant(`gld-${name}`, text);
      const run = await world.gwapi(['bro-gld', path('gld-dispatch.xml'), bad]);
      t.not(run.code, 0, `gld-${name}: the command fails`);
      t.match(run.stderr, `${bad}:`, 'the file is named');
      t.match(run.stderr, error, `gld-${name}`);
      t.match(run.stdout, /gld-dispatch\.xml: 10 points read/, 'the file before it imported');
      t.same(await world.series(TUBE_2, FROM, TO), [], 'nothing of the refused file');
      t.equal((await world.series(TUBE_1, FROM, TO)).length, 5, 'the file before it whole');
    }
    const delta = await world.network(FROM, TO, syncToken);
    t.same(
      delta.series.map((series) => series.tubeIdentifier),
      [TUBE_1],
      "the delta holds the good file's tube, nothing of the refused ones",
    );
  },
);

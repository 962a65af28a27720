/**
 * `gwapi import bro-gld` of BRO's CSV exports as the operator runs it, read back over HTTP as a client
 * reads it: the levels land on the tube the GMW dispatch registered (the same rows as the dossier's XML),
 * with their times, values and statuses in the series, latest and sync deltas; a second import changes
 * nothing; a bad file is refused whole, with the files before it imported whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { formatImportWorld } from '../../../helpers/formatImport.js';
import { FIXTURES, pythonUuid5 } from '../readerSink.js';

const bro = (name: string) => join(FIXTURES, 'bro', name);
const GMW = bro('gmw-dispatch.xml');
const OBJECTS = bro('GLD000000012893_objectsAsCsv.csv');
const SERIES = bro('GLD000000012893_seriesAsCsv.csv');
const TIME_VALUE = bro('GMW000000036287-1_time_value.csv');

const [TUBE_1, TUBE_2] = pythonUuid5('urn:bro:gmw:GMW000000036287:1', 'urn:bro:gmw:GMW000000036287:2') as [
  string,
  string,
];

const FROM = '2021-03-01T00:00:00Z';
const TO = '2022-01-01T00:00:00Z';

t.test("BRO's three CSV exports of a GLD, end to end", async (t) => {
  const world = await formatImportWorld(t);
  t.equal((await world.gwapi(['bro-gmw', GMW])).code, 0, 'the GMW dispatch registers the tubes');
  const registered = await world.wells();

  const first = await world.gwapi(['bro-gld', OBJECTS]);
  t.equal(first.code, 0, first.stderr);
  t.match(
    first.stdout,
    '9 points read: 2 approved, 3 provisional and 1 rejected written; ' +
      '1 missing value, 1 control reading, 1 duplicate time',
  );
  t.same(
    await world.wells(),
    registered,
    'discovery: the well and its tubes as the GMW dispatch states them',
  );
  t.equal((await world.wellsGeoJson()).features.length, 1, 'one well in GeoJSON');
  t.same(
    await world.series(TUBE_1, FROM, TO),
    [
      { observedAt: '2021-03-27T23:00:00Z', value: 0.812, status: 'approved' },
      { observedAt: '2021-03-28T01:00:00Z', value: 0.671, status: 'approved' },
      { observedAt: '2021-03-28T22:00:00Z', value: 0.805, status: 'rejected' },
      { observedAt: '2021-03-29T22:00:00Z', value: 0.802, status: 'provisional' },
      { observedAt: '2021-03-30T22:00:00Z', value: 0.799, status: 'provisional' },
      { observedAt: '2021-04-02T22:00:00Z', value: 0.795, status: 'provisional' },
    ],
    'UTC times, 15 digits; the fully reviewed rejected point over the provisional one of its time; the ' +
      "point with no value does not hide the provisional one's",
  );
  t.same(await world.statedLatest(), [
    { tubeIdentifier: TUBE_1, observedAt: '2021-04-02T22:00:00Z', value: 0.795, status: 'provisional' },
  ]);

  const before = await world.network(FROM, TO);
  const changes = async () =>
    (await world.api.db.sql`select count(*)::int as n from measurement_changes`)[0]?.n as number;
  const changesBefore = await changes();
  const again = await world.gwapi(['bro-gld', OBJECTS]);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, '9 points read: nothing written, 6 unchanged', 'a second import changes nothing');
  t.equal(await changes(), changesBefore, 'nor the change log');
  t.same((await world.network(FROM, TO, before.syncToken)).series, [], 'an empty delta');

  const series = await world.gwapi(['bro-gld', SERIES, '--tube', TUBE_1]);
  t.equal(series.code, 0, series.stderr);
  t.match(
    series.stdout,
    '8 points read: 3 provisional written, 3 unchanged; 1 missing value, 1 control reading',
  );
  const afterSeries = await world.network(FROM, TO, before.syncToken);
  t.same(
    afterSeries.series.map(({ tubeIdentifier, measurements }) => ({ tubeIdentifier, measurements })),
    [
      {
        tubeIdentifier: TUBE_1,
        measurements: [
          { observedAt: '2021-03-28T22:00:00Z', value: 0.807, status: 'provisional' },
          { observedAt: '2021-04-02T22:00:00Z', value: 0.793, status: 'provisional' },
          { observedAt: '2021-04-03T22:00:00Z', value: 0.795, status: 'provisional' },
        ],
      },
    ],
    'seriesAsCsv, whose rejected value BRO leaves out: the delta holds what it changed',
  );

  const restored = await world.gwapi(['bro-gld', OBJECTS, '--tube', TUBE_1]);
  t.equal(restored.code, 0, restored.stderr);
  t.match(
    restored.stdout,
    '9 points read: 1 provisional and 1 rejected written, 4 unchanged; 1 missing value, 1 control reading, 1 duplicate time',
    'the full report again, with a --tube that agrees: its two levels the series replaced',
  );

  const timeValue = await world.gwapi(['bro-gld', TIME_VALUE, '--tube', TUBE_1]);
  t.equal(timeValue.code, 0, timeValue.stderr);
  t.match(
    timeValue.stdout,
    '6 points read: 2 provisional and 1 rejected written, 1 unchanged; 1 missing value, 1 duplicate time',
  );
  t.same(
    (await world.series(TUBE_1, '2021-04-02T00:00:00Z', TO)).map(({ observedAt, value, status }) => [
      observedAt,
      value,
      status,
    ]),
    [
      ['2021-04-02T22:00:00Z', 0.795, 'provisional'],
      ['2021-04-03T22:00:00Z', 0.781, 'rejected'],
      ['2021-04-04T22:00:00Z', 0.778, 'provisional'],
      ['2021-10-31T23:00:00Z', 0.671, 'provisional'],
    ],
    'offsets written +0200 and +0100; of two rows of one time, the later',
  );
  t.same(await world.statedLatest(), [
    { tubeIdentifier: TUBE_1, observedAt: '2021-10-31T23:00:00Z', value: 0.671, status: 'provisional' },
  ]);
  t.same((await world.series(TUBE_2, FROM, TO)).length, 0, 'nothing on the other tube of the well');
});

t.test("identity: a dossier's CSV export lands on the rows its GLD XML wrote", async (t) => {
  const world = await formatImportWorld(t);
  t.equal((await world.gwapi(['bro-gmw', GMW])).code, 0);
  const xml = await world.gwapi(['bro-gld', bro('gld-dispatch.xml')]);
  t.equal(xml.code, 0, xml.stderr);
  const from = '2023-12-01T00:00:00Z';
  const to = '2024-08-01T00:00:00Z';
  const levels = await world.series(TUBE_1, from, to);
  t.equal(levels.length, 5, 'the XML wrote five levels');
  const csv = await world.gwapi(['bro-gld', bro('GLD000000012893_2024_objectsAsCsv.csv')]);
  t.equal(csv.code, 0, csv.stderr);
  t.match(
    csv.stdout,
    '10 points read: nothing written, 5 unchanged; 2 missing values, 1 control reading, 2 duplicate times',
    'every level of the CSV export is one the XML wrote, on the same tube, as it is',
  );
  t.same(await world.series(TUBE_1, from, to), levels);
  t.same(
    (await world.wells()).flatMap((well) => well.tubes.map((tube) => tube.identifier)).sort(),
    [TUBE_1, TUBE_2].sort(),
    "the tubes' identifiers are uuid5(URL, urn:bro:gmw:{well}:{tubeNumber}), as Python computes them",
  );
});

t.test('bad files: refused whole, the files before them imported whole', async (t) => {
  const world = await formatImportWorld(t);
  t.equal((await world.gwapi(['bro-gmw', GMW])).code, 0);
  const objects = readFileSync(OBJECTS, 'utf8');
  const directory = t.testdir();
  const file = (name: string, text: string) => {
    const path = join(directory, name);
    writeFileSync(path, text);
    return path;
  };
  const centimetres =
    'Tijdstip,Voorlopige Waarde [cm],Voorlopige Opmerking,Beoordeelde Waarde [cm],Beoordeelde Opmerking\n' +
    '1616886000000,81.2,,,\n';
  const [UNKNOWN] = pythonUuid5('urn:bro:gmw:GMW000000099999:1');
  /** A bad file, the options it is given (with the good file before it), and what the error says. */
  const cases: [string, string[], string][] = [
    [
      file('truncated.csv', objects.slice(0, objects.indexOf('0.802') + 3)),
      [],
      ':23: line: unterminated quoted field',
    ],
    [join(FIXTURES, 'dino', 'B32C0211001_1.csv'), [], ":1: header: not one of BRO's CSV exports of a GLD"],
    [
      file('not-a-number.csv', objects.replace('"0.802"', '"0,802"')),
      [],
      ':23: waterstand: "0,802": not a decimal number',
    ],
    [
      file(
        'time-without-date.csv',
        objects.replace('"2021-03-30T00:00:00+02:00","0.802"', '"00:00:00+02:00","0.802"'),
      ),
      [],
      ':23: tijdstip meting: "00:00:00+02:00": must be an RFC 3339 date-time',
    ],
    [
      file('unknown-tube.csv', objects.replace('"GMW000000036287","1"', '"GMW000000099999","1"')),
      [],
      `:12: tube: no tube ${UNKNOWN} is registered (7 levels of it from this line on): import the file that describes it first`,
    ],
    [file('centimetres.csv', centimetres), ['--tube', TUBE_1], ':1: Voorlopige Waarde [cm]: unit "cm"'],
    [SERIES, [], ":1: tube: BRO's seriesAsCsv export names no tube: give it with --tube"],
  ];
  const first = await world.gwapi(['bro-gld', OBJECTS, cases[2]![0]]);
  t.equal(first.code, 1);
  t.match(
    first.stdout,
    '9 points read: 2 approved, 3 provisional and 1 rejected written',
    'the file before, whole',
  );
  const token = (await world.network(FROM, TO)).syncToken;
  const levels = await world.series(TUBE_1, FROM, TO);
  t.equal(levels.length, 6);
  for (const [path, options, error] of cases) {
    const result = await world.gwapi(['bro-gld', OBJECTS, path, ...options]);
    t.not(result.code, 0, `${path}: exit non-zero`);
    t.match(result.stderr, `${path}${error}`, `${path}: its name, line, field and reason`);
    t.match(
      result.stdout,
      '9 points read: nothing written, 6 unchanged',
      `${path}: the file before it imported`,
    );
    t.same(await world.series(TUBE_1, FROM, TO), levels, `${path}: nothing of it in the series`);
    t.same((await world.network(FROM, TO, token)).series, [], `${path}: nothing of it in a delta`);
  }
  const disagreeing = await world.gwapi(['bro-gld', OBJECTS, '--tube', TUBE_2]);
  t.not(disagreeing.code, 0);
  t.match(
    disagreeing.stderr,
    `${OBJECTS}:5: put BRO-ID: the file is of GMW000000036287 tube 1 (${TUBE_1}), --tube gives ${TUBE_2}`,
    'a --tube that disagrees with the tube the file names',
  );
  t.same((await world.network(FROM, TO, token)).series, [], 'nothing of it in a delta');
  t.same(
    (await world.wells()).flatMap((well) => well.tubes.map((tube) => tube.identifier)).sort(),
    [TUBE_1, TUBE_2].sort(),
    'no tube of a refused file',
  );
  t.same(await world.changedTubes(), [TUBE_1], 'the change log holds the good file only');
});

t.test("--tube: a UUID or BRO's own GMW000000036287:1; anything else an option error", async (t) => {
  const world = await formatImportWorld(t);
  t.equal((await world.gwapi(['bro-gmw', GMW])).code, 0);
  for (const malformed of ['GMW000000036287', 'GMW000000036287:x', `${TUBE_1}0`, "x' or 1=1"]) {
    const result = await world.gwapi(['bro-gld', SERIES, '--tube', malformed]);
    t.not(result.code, 0, `${malformed}: exit non-zero`);
    t.match(
      result.stderr,
      `option '--tube <id>' argument '${malformed}' is invalid. not a tube: give its UUID or BRO's well and tube number, such as GMW000000036287:1`,
      `${malformed}: refused before any file is read`,
    );
    t.equal(result.stdout, '', `${malformed}: no file imported`);
  }
  t.same(await world.changedTubes(), [], 'nothing written');
  const named = await world.gwapi(['bro-gld', SERIES, '--tube', 'GMW000000036287:1']);
  t.equal(named.code, 0, named.stderr);
  const upper = await world.gwapi(['bro-gld', SERIES, '--tube', TUBE_1.toUpperCase()]);
  t.equal(upper.code, 0, upper.stderr);
  t.match(upper.stdout, 'nothing written', 'the same tube as its UUID, in either case');
  t.same(await world.changedTubes(), [TUBE_1], "BRO's naming is the tube's UUID v5");
});

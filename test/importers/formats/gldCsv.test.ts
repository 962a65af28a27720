import t from 'tap';
import { gldCsvReader } from '../../../src/importers/formats/bro/gldCsv.js';
import { type Call, fixture, pythonUuid5, read } from './readerSink.js';

const [TUBE, OTHER_TUBE] = pythonUuid5('urn:bro:gmw:GMW000000036287:1', 'urn:bro:gmw:GMW000000036287:2') as [
  string,
  string,
];

const OBJECTS = fixture('bro/GLD000000012893_objectsAsCsv.csv');
const SERIES = fixture('bro/GLD000000012893_seriesAsCsv.csv');
const TIME_VALUE = fixture('bro/GMW000000036287-1_time_value.csv');

const level = (...call: [number, string, number, string, number]): Call => ({
  level: [call[0], TUBE, call[1], call[2], call[3], call[4]],
});
const skip = (reason: string): Call => ({ skip: reason, count: 1 });

t.test(
  "objectsAsCsv: the tube it names, each observation's review level, control readings skipped",
  async (t) => {
    const expected = [
      // volledigBeoordeeld: goedgekeurd is approved, afgekeurd rejected; offsets read; 16 digits rounded.
      level(12, '2021-03-27T23:00:00Z', 0.812, 'approved', 2),
      level(13, '2021-03-28T01:00:00Z', 0.671, 'approved', 2),
      level(14, '2021-03-28T22:00:00Z', 0.805, 'rejected', 2),
      skip('missing value'),
      // voorlopig: provisional, below the fully reviewed points of the same time.
      level(22, '2021-03-28T22:00:00Z', 0.807, 'provisional', 1),
      level(23, '2021-03-29T22:00:00Z', 0.802, 'provisional', 1),
      level(24, '2021-03-30T22:00:00Z', 0.799, 'provisional', 1),
      level(25, '2021-04-02T22:00:00Z', 0.795, 'provisional', 1),
      skip('control reading'),
    ];
    for (const chunkSize of [1, 7, 65_536]) {
      t.same(read(gldCsvReader, OBJECTS, {}, chunkSize), expected, `read ${chunkSize} bytes at a time`);
    }
    t.same(read(gldCsvReader, OBJECTS, { tube: TUBE.toUpperCase() }), expected, 'a --tube that agrees');
    t.throws(() => read(gldCsvReader, OBJECTS, { tube: OTHER_TUBE }), {
      name: 'FileRefused',
      place: { line: 5 },
      field: 'put BRO-ID',
      message: new RegExp(`GMW000000036287 tube 1 \\(${TUBE}\\), --tube gives ${OTHER_TUBE}`),
    });
  },
);

t.test('seriesAsCsv: a column per kind of value, times in milliseconds, the tube from --tube', async (t) => {
  t.throws(() => read(gldCsvReader, SERIES), {
    place: { line: 1 },
    field: 'tube',
    message: /seriesAsCsv export names no tube: give it with --tube/,
  });
  t.same(read(gldCsvReader, SERIES, { tube: TUBE }, 3), [
    level(2, '2021-03-27T23:00:00Z', 0.812, 'approved', 2),
    level(3, '2021-03-28T01:00:00Z', 0.671, 'approved', 2),
    level(4, '2021-03-28T22:00:00Z', 0.807, 'provisional', 1),
    level(5, '2021-03-29T22:00:00Z', 0.802, 'provisional', 1),
    skip('missing value'),
    skip('control reading'),
    level(8, '2021-04-02T22:00:00Z', 0.793, 'provisional', 0),
    level(9, '2021-04-03T22:00:00Z', 0.795, 'provisional', 1),
  ]);
  const header = SERIES.toString().split('\n')[0]!;
  const iso = `${header}\n2021-03-28T03:00:00+02:00,0.8,,0.81,,,,,\n2021-03-28T00:00:00+0100,0.7,afgekeurd,,,,,,\n`;
  t.same(
    read(gldCsvReader, iso, { tube: TUBE }),
    [
      level(2, '2021-03-28T01:00:00Z', 0.8, 'provisional', 1),
      level(2, '2021-03-28T01:00:00Z', 0.81, 'approved', 2),
      level(3, '2021-03-27T23:00:00Z', 0.7, 'rejected', 1),
    ],
    'RFC 3339 times, offsets with and without a colon; a value marked afgekeurd is rejected',
  );
  t.throws(() => read(gldCsvReader, header.replaceAll('[m]', '[cm]'), { tube: TUBE }), {
    place: { line: 1 },
    field: 'Voorlopige Waarde [cm]',
    message: /unit "cm": levels are read in metres \(m\) only/,
  });
});

t.test('time,value,status_quality_control,censor_reason,censor_limit: offsets such as +0200', async (t) => {
  t.throws(() => read(gldCsvReader, TIME_VALUE), { name: 'FileRefused', place: { line: 1 }, field: 'tube' });
  t.same(read(gldCsvReader, TIME_VALUE, { tube: TUBE }, 11), [
    level(2, '2021-04-02T22:00:00Z', 0.795, 'provisional', 0),
    level(3, '2021-04-03T22:00:00Z', 0.781, 'rejected', 0),
    skip('missing value'),
    level(5, '2021-04-04T22:00:00Z', 0.776, 'provisional', 0),
    level(6, '2021-04-04T22:00:00Z', 0.778, 'provisional', 0),
    level(7, '2021-10-31T23:00:00Z', 0.671, 'provisional', 0),
  ]);
  t.same(
    read(gldCsvReader, 'time,value\n2021-04-03T00:00:00Z,1.5\n', { tube: TUBE }),
    [{ level: [2, TUBE, '2021-04-03T00:00:00Z', 1.5, 'provisional', 0] }],
    'time and value alone',
  );
  t.throws(() => read(gldCsvReader, 'time,value,unit\n', { tube: TUBE }), {
    place: { line: 1 },
    field: 'header',
    message: /expected the columns time,value,status_quality_control,censor_reason,censor_limit/,
  });
});

t.test('a refused file: its line and field, and why', async (t) => {
  const objects = OBJECTS.toString();
  const refusals: [string, string | Buffer, object][] = [
    ['empty', '', { place: { line: 1 }, message: /the file is empty/ }],
    [
      'cut off inside a field',
      objects.slice(0, objects.indexOf('0.802') + 3),
      { place: { line: 23 }, field: 'line', message: /unterminated quoted field/ },
    ],
    [
      'cut off between fields',
      objects.slice(0, objects.indexOf(',"goedgekeurd",,,"discontinu"\n"2021-03-31')),
      { place: { line: 23 }, field: 'row', message: /expected 6 fields .*found 2 \(is the file cut off\?\)/ },
    ],
    [
      'cut off before a section’s values',
      objects.slice(0, objects.indexOf('"_c5f2a9b0')),
      { place: { line: 18 }, message: /ends before the observation's values/ },
    ],
    [
      'another format: DINO',
      fixture('dino/B32C0211001_1.csv'),
      {
        place: { line: 1 },
        field: 'header',
        message: /not one of BRO's CSV exports of a GLD.*found "Titel:,,/,
      },
    ],
    [
      'a value that is not a number',
      objects.replace('"0.802"', '"0,802"'),
      { place: { line: 23 }, field: 'waterstand', message: /"0,802": not a decimal number/ },
    ],
    [
      'a time without a date',
      objects.replace('"2021-03-30T00:00:00+02:00","0.802"', '"00:00:00+02:00","0.802"'),
      {
        place: { line: 23 },
        field: 'tijdstip meting',
        message: /"00:00:00\+02:00": must be an RFC 3339 date-time/,
      },
    ],
    [
      'a time that does not exist',
      objects.replace('2021-03-30T00:00:00+02:00","0.802"', '2021-02-30T00:00:00+0200","0.802"'),
      { place: { line: 23 }, field: 'tijdstip meting', message: /day 30 does not exist in 2021-02/ },
    ],
    [
      'points before the tube is named',
      objects.replace('"put BRO-ID"', '"putje"'),
      { place: { line: 4 }, field: 'row', message: /expected a section of BRO's objectsAsCsv report/ },
    ],
  ];
  for (const [name, bytes, refusal] of refusals) {
    t.throws(() => read(gldCsvReader, bytes), { name: 'FileRefused', ...refusal }, name);
  }
  t.throws(
    () => read(gldCsvReader, `${SERIES.toString()}1617487200000,abc,,,,,,,\n`, { tube: TUBE }),
    { place: { line: 10 }, field: 'Waarde', message: /"abc": not a decimal number/ },
    'seriesAsCsv: a value that is not a number',
  );
  t.throws(
    () => read(gldCsvReader, SERIES.subarray(0, SERIES.indexOf('0.793') + 3), { tube: TUBE }),
    { place: { line: 8 }, field: 'row', message: /expected 9 fields/ },
    'seriesAsCsv: cut off',
  );
});

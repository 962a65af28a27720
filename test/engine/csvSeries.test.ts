/**
 * The CSV writer alone: its lines for a raw and an aggregated series, numbers as the JSON writes them,
 * RFC 4180 quoting of the unit and datum, and one writer per response.
 */
import t from 'tap';
import { batchOf, type MeasurementValues } from '../../src/engine/batch.js';
import type { SeriesHead } from '../../src/engine/schemas.js';
import { csvColumns, csvField, csv as csvFormat, csvWriter } from '../../src/engine/write/csv.js';
import { CutOffGuard, documentChunks } from '../../src/engine/write/document.js';
import { json as jsonFormat } from '../../src/engine/write/json.js';

const jsonSeries = jsonFormat.series();

const HEAD = {
  tubeIdentifier: '2f1c7a4e-9b1d-4c3e-8f55-0a6d3c9e1b42',
  from: '2024-01-01T00:00:00Z',
  to: '2024-01-02T00:00:00Z',
  unit: 'm',
  verticalDatum: 'NAP',
};

/** Doubles whose shortest text needs an exponent, or none where one could be written, and -0. */
const ROWS: MeasurementValues[] = [
  { observedAt: '2024-01-01T00:00:00Z', value: -1.23 },
  { observedAt: '2024-01-01T00:00:00.000001Z', value: 1e-7 },
  { observedAt: '2024-01-01T00:00:01Z', value: 1.5e20 },
  { observedAt: '2024-01-01T00:00:02Z', value: -0 },
];

const write = (writer = csvWriter(), head: SeriesHead = HEAD, batches: MeasurementValues[][] = [ROWS]) =>
  Buffer.concat([
    writer.head(head),
    ...batches.map((rows, i) => writer.batch(batchOf(rows), i === 0)),
    writer.close(),
  ]).toString();

t.test('raw rows: header, lines after CRLF, numbers as the JSON writes them', async (t) => {
  const csv = write();
  t.equal(
    csv,
    'observedAt,value,unit,verticalDatum\r\n' +
      '2024-01-01T00:00:00Z,-1.23,m,NAP\r\n' +
      '2024-01-01T00:00:00.000001Z,1e-7,m,NAP\r\n' +
      '2024-01-01T00:00:01Z,150000000000000000000,m,NAP\r\n' +
      '2024-01-01T00:00:02Z,0,m,NAP\r\n',
  );
  const json = JSON.parse(
    Buffer.concat([
      jsonSeries.head(HEAD),
      jsonSeries.batch(batchOf(ROWS), true),
      jsonSeries.close(),
    ]).toString(),
  );
  const values = jsonSeries
    .batch(batchOf(ROWS), true)
    .toString()
    .match(/"value":[^}]+/g)!
    .map((field) => field.slice('"value":'.length));
  t.same(
    csv.split('\r\n').slice(1, -1),
    json.measurements.map((m: { observedAt: string }, i: number) => `${m.observedAt},${values[i]},m,NAP`),
    'the JSON text of every value',
  );
  t.equal(csvFormat.mediaType, 'text/csv; charset=utf-8; header=present');
});

t.test('batches continue one another; an empty interval is the header line', async (t) => {
  t.equal(write(csvWriter(), HEAD, [ROWS.slice(0, 2), ROWS.slice(2)]), write());
  t.equal(write(csvWriter(), HEAD, []), 'observedAt,value,unit,verticalDatum\r\n');
});

t.test('unit and datum: quoted once per response when RFC 4180 asks for it', async (t) => {
  const cases: [string, string][] = [
    ['m', 'm'],
    ['m NAP', 'm NAP'],
    ['a,b', '"a,b"'],
    ['say "m"', '"say ""m"""'],
    ['two\r\nlines', '"two\r\nlines"'],
    ['lf\nonly', '"lf\nonly"'],
    ['', ''],
  ];
  for (const [text, written] of cases) t.equal(csvField(text), written, JSON.stringify(text));
  const csv = write(csvWriter(), { ...HEAD, unit: 'c,m', verticalDatum: '"TAW"' }, [ROWS.slice(0, 1)]);
  t.equal(csv, 'observedAt,value,unit,verticalDatum\r\n2024-01-01T00:00:00Z,-1.23,"c,m","""TAW"""\r\n');
});

t.test('each response has its own writer: the unit of one never reaches another', async (t) => {
  const first = csvWriter();
  const second = csvWriter();
  first.head({ ...HEAD, unit: 'cm' });
  second.head(HEAD);
  t.equal(first.batch(batchOf(ROWS.slice(0, 1)), true).toString(), '\r\n2024-01-01T00:00:00Z,-1.23,cm,NAP');
  t.equal(second.batch(batchOf(ROWS.slice(0, 1)), true).toString(), '\r\n2024-01-01T00:00:00Z,-1.23,m,NAP');
});

t.test('an aggregated series: its columns, chosen by the head', async (t) => {
  const rows: MeasurementValues[] = [
    { observedAt: '2024-01-01T00:00:00Z', value: -1.2345, min: -2, max: 1e-5, count: 4 },
  ];
  t.equal(
    write(csvWriter(), { ...HEAD, aggregate: 'PT1H' }, [rows]),
    'observedAt,value,min,max,count,unit,verticalDatum\r\n2024-01-01T00:00:00Z,-1.2345,-2,0.00001,4,m,NAP\r\n',
  );
  t.equal(
    write(csvWriter(), { ...HEAD, aggregate: 'P1D' }, []),
    'observedAt,value,min,max,count,unit,verticalDatum\r\n',
  );
  t.equal(csvColumns([['observedAt', 'instant']]).header, 'observedAt,unit,verticalDatum', 'any column list');
  t.throws(() => csvColumns([['value); process.exit(', 'instant']]), /not a column name/);
});

t.test('a CSV or JSON body cut between chunks ends on a whole value: nothing is held back', async (t) => {
  const head = { ...HEAD, tubeIdentifier: 't' };
  async function* batches() {
    for (const row of ROWS) yield batchOf([row]);
  }
  for (const format of [csvFormat, jsonFormat]) {
    for (const writer of [format.series(), format.network()]) {
      const guard = new CutOffGuard(writer);
      const chunks: Buffer[] = [];
      for await (const chunk of documentChunks({ tubes: [head], everyTube: true }, batches(), writer, guard))
        chunks.push(chunk);
      const written = [writer.head(head), ...ROWS.map((row, i) => writer.batch(batchOf([row]), i === 0))];
      // The first chunk holds the head too (and a network's opening, which this document has none of).
      t.same(chunks.slice(1), written.slice(2), `${format.name}: each chunk as the writer wrote it`);
      t.ok(guard.close(writer.close()).equals(writer.close()), `${format.name}: the close alone`);
    }
  }
});

/**
 * The series as an Apache Arrow IPC stream over real HTTP (docs/clients.md, "Formats"), read by two
 * readers nobody here wrote, apache-arrow (`tableFromIPC`) and polars (`readIPCStream`), and compared
 * with the JSON of the same request value by value: instants to the microsecond, doubles bit for bit.
 * Also negotiation, headers, ETag, empty intervals, aggregates, codings, a year, and a late error.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { MessageHeader, tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import t, { type Test } from 'tap';
import { addKey, addMeasurements, addRegularSeries, addWell, rollUpDays } from '../../../testkit/fixtures.js';
import { openStream } from '../../../testkit/openStream.js';
import { startApi } from '../../helpers/api.js';
import { arrowColumn, messageTypes, micros, mismatches } from '../../helpers/arrow.js';
import { get, type HttpResponse, send } from '../../helpers/http.js';
import { until } from '../../helpers/until.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const END_OF_STREAM = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
const path = (id: string, query = '') => `/v1/groundwater-monitoring-tubes/${id}/measurements${query}`;
const DAY = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';
/** The night Europe's clocks go forward, asked in local time on both sides of the change. */
const DST_NIGHT = '?from=2024-03-31T00:00:00%2B01:00&to=2024-03-31T06:00:00%2B02:00';
const YEAR = '?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';

interface JsonMeasurement {
  observedAt: string;
  value: number;
  min?: number;
  max?: number;
  count?: number;
}

const FLOAT_COLUMNS = ['value', 'min', 'max'] as const;

/**
 * Reads the Arrow body with both readers and compares it with the JSON body of the same request:
 * schema and metadata (apache-arrow), columns and every value (both).
 */
function sameAsJson(t: Test, arrow: Buffer, jsonBody: string, label: string): void {
  const json = JSON.parse(jsonBody);
  const measurements: JsonMeasurement[] = json.measurements;
  const aggregated = json.aggregate !== undefined;
  const columns = aggregated ? ['observedAt', 'value', 'min', 'max', 'count'] : ['observedAt', 'value'];
  const instants = measurements.map((m) => micros(m.observedAt));

  const table = tableFromIPC(arrow);
  t.same(
    table.schema.fields.map((field) => [field.name, String(field.type), field.nullable]),
    columns.map((name) => [
      name,
      { observedAt: 'Timestamp<MICROSECOND, UTC>', count: 'Int64' }[name] ?? 'Float64',
      false,
    ]),
    `${label}: apache-arrow reads the columns, none nullable`,
  );
  const { measurements: _, ...head } = json;
  t.same(Object.fromEntries(table.schema.metadata), head, `${label}: the head as the schema's metadata`);
  t.equal(table.numRows, measurements.length, `${label}: apache-arrow reads every row`);
  t.equal(mismatches(arrowColumn(table, 'observedAt'), instants), 0, `${label}: instants to the µs`);
  for (const name of FLOAT_COLUMNS.filter((name) => columns.includes(name))) {
    const expected = measurements.map((m) => m[name]!);
    t.equal(mismatches(arrowColumn(table, name), expected), 0, `${label}: every ${name}, bit for bit`);
  }
  if (aggregated) {
    const counts = measurements.map((m) => BigInt(m.count!));
    t.equal(mismatches(arrowColumn(table, 'count'), counts), 0, `${label}: every count`);
  }

  const frame = pl.readIPCStream(arrow);
  t.same(frame.columns, columns, `${label}: polars reads the columns`);
  t.equal(frame.height, measurements.length, `${label}: polars reads every row`);
  if (measurements.length === 0) return;
  t.equal(String(frame.getColumn('observedAt').dtype), 'DataType(Datetime(us,UTC))');
  const polarsInstants = frame.getColumn('observedAt').cast(pl.Int64).toArray() as unknown as number[];
  t.equal(mismatches(polarsInstants, instants), 0, `${label}: polars, instants to the µs`);
  for (const name of FLOAT_COLUMNS.filter((name) => columns.includes(name))) {
    const expected = measurements.map((m) => m[name]!);
    const read = frame.getColumn(name).toArray() as number[];
    t.equal(mismatches(read, expected), 0, `${label}: polars, every ${name} bit for bit`);
  }
  if (aggregated) {
    const counts = measurements.map((m) => BigInt(m.count!));
    const read = frame.getColumn('count').toArray() as number[];
    t.equal(mismatches(read, counts), 0, `${label}: polars, every count`);
  }
}

t.test('Arrow', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  const [precise, dst, quoted, empty, year] = await addWell(sql, 'Well', [
    { number: '1' },
    { number: '2' },
    { number: '3', unit: 'cm', verticalDatum: '"TAW", local' },
    { number: '4' },
    { number: '5' },
  ]);
  // Doubles whose shortest text needs 17 digits, an exponent either way, or none; instants with
  // microseconds, before 1970, and at the ends of the day.
  await addMeasurements(sql, precise!.id, [
    ['1969-12-31T23:59:59.999999Z', '1.5'],
    ['2024-01-01T00:00:00Z', '-1.23'],
    ['2024-01-01T00:00:00.000001Z', '0.1'],
    ['2024-01-01T00:00:00.5Z', '12.3456789012345'],
    ['2024-01-01T06:00:00Z', '123456789.123456'],
    ['2024-01-01T12:00:00.12Z', '100'],
    ['2024-01-01T13:00:00Z', '-12345.678'],
    ['2024-01-01T18:00:00Z', '1e21'],
    ['2024-01-01T20:00:00Z', '-0.000001'],
    ['2024-01-01T23:59:59.999999Z', '1e-7'],
    ['2024-01-02T00:00:00Z', '2'],
  ]);
  await sql`
    insert into measurements (tube_id, observed_at, value)
    values (${precise!.id}, '2024-01-01T03:00:00Z', 0.1::float8 + 0.2::float8)`;
  await rollUpDays(sql, [precise!.id]);
  // Quarter hours through the night of the change to summer time.
  await addRegularSeries(sql, dst!.id, '2024-03-30T22:00:00Z', '2024-03-31T05:00:00Z', '15 minutes');
  await addMeasurements(sql, quoted!.id, [['2024-01-01T06:00:00Z', '-0.001']]);
  await addRegularSeries(sql, year!.id, '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '1 minute');
  const { key } = await addKey(sql, {
    tubeIds: [precise!.id, dst!.id, quoted!.id, empty!.id, year!.id],
  });
  const fetchSeries = (id: string, query: string, headers: Record<string, string> = {}) =>
    get(api.base, path(id, query), { 'x-api-key': key, ...headers });
  /** The Arrow and the JSON of the same request. */
  const both = async (id: string, query: string) =>
    [await fetchSeries(id, `${query}&format=arrow`), await fetchSeries(id, query)] as const;
  const isArrow = (response: HttpResponse) => response.headers['content-type'] === ARROW;

  t.test('precision fixtures: headers, both readers, every value as in the JSON', async (t) => {
    const [arrow, json] = await both(precise!.identifier, DAY);
    t.equal(arrow.status, 200);
    t.equal(arrow.headers['content-type'], ARROW);
    t.equal(arrow.headers.vary, 'Accept, Accept-Encoding');
    t.equal(
      arrow.headers['content-disposition'],
      `attachment; filename="${precise!.identifier}_20240101T000000Z_20240102T000000Z.arrows"`,
    );
    t.ok(arrow.bytes!.subarray(-8).equals(END_OF_STREAM), 'it ends with the end-of-stream marker');
    sameAsJson(t, arrow.bytes!, json.body, 'a day');
    t.same(
      messageTypes(arrow.bytes!),
      [MessageHeader.Schema, MessageHeader.RecordBatch],
      'the schema and one record batch for one batch of the source',
    );
    const [before1970] = await both(
      precise!.identifier,
      '?from=1969-12-31T00:00:00Z&to=1970-01-01T00:00:00Z',
    );
    t.equal(tableFromIPC(before1970.bytes!).numRows, 1);
    const [quotedArrow, quotedJson] = await both(quoted!.identifier, DAY);
    sameAsJson(t, quotedArrow.bytes!, quotedJson.body, 'unit and datum that CSV would quote');
  });

  t.test('DST: local bounds on both sides of the change, normalised as in the JSON', async (t) => {
    const [arrow, json] = await both(dst!.identifier, DST_NIGHT);
    t.equal(JSON.parse(json.body).measurements.length, 20, 'five hours of quarter hours');
    t.equal(
      arrow.headers['content-disposition'],
      `attachment; filename="${dst!.identifier}_20240330T230000Z_20240331T040000Z.arrows"`,
    );
    sameAsJson(t, arrow.bytes!, json.body, 'DST night');
  });

  t.test('an empty interval: the schema and the end-of-stream marker, no batch', async (t) => {
    for (const [id, query] of [
      [empty!.identifier, DAY],
      [precise!.identifier, '?from=2023-01-01T00:00:00Z&to=2023-01-02T00:00:00Z'],
      [empty!.identifier, `${DAY}&aggregate=PT1H`],
    ] as const) {
      const [arrow, json] = await both(id, query);
      t.equal(arrow.status, 200);
      t.ok(arrow.bytes!.subarray(-8).equals(END_OF_STREAM));
      t.same(messageTypes(arrow.bytes!), [MessageHeader.Schema], 'the schema, no batch');
      sameAsJson(t, arrow.bytes!, json.body, `empty ${query}`);
    }
  });

  t.test('aggregates: min, max and count after value, aggregate in the metadata', async (t) => {
    for (const [id, query] of [
      [precise!.identifier, `${DAY}&aggregate=PT1H`],
      [precise!.identifier, `${DAY}&aggregate=P1D`],
      [dst!.identifier, `${DST_NIGHT}&aggregate=PT1H`],
      [year!.identifier, `${YEAR}&aggregate=P7D`],
      [year!.identifier, `${YEAR}&aggregate=PT15M`],
    ] as const) {
      const [arrow, json] = await both(id, query);
      t.equal(arrow.status, 200);
      sameAsJson(t, arrow.bytes!, json.body, query);
    }
  });

  t.test('gzip and br: the same stream, compressed as it goes', async (t) => {
    const plain = await fetchSeries(precise!.identifier, `${DAY}&format=arrow`);
    const json = await fetchSeries(precise!.identifier, DAY);
    for (const [coding, decompress] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const compressed = await fetchSeries(precise!.identifier, `${DAY}&format=arrow`, {
        'accept-encoding': coding,
      });
      t.equal(compressed.headers['content-encoding'], coding);
      t.equal(compressed.headers['content-type'], ARROW);
      const bytes = decompress(compressed.bytes!);
      t.ok(bytes.equals(plain.bytes!), `${coding}: decompresses to the plain stream`);
      sameAsJson(t, bytes, json.body, coding);
      t.not(compressed.headers.etag, plain.headers.etag, `${coding}: an ETag of its own`);
    }
  });

  t.test('366 days of 1-minute data: every value, in batches that follow the source', async (t) => {
    const [arrow, json] = await both(year!.identifier, YEAR);
    t.equal(JSON.parse(json.body).measurements.length, 366 * 1440);
    sameAsJson(t, arrow.bytes!, json.body, 'a year');
    const types = messageTypes(arrow.bytes!);
    t.equal(types.length, 1 + Math.ceil((366 * 1440) / 2000), 'the schema and a record batch per 2,000 rows');
    t.ok(types.slice(1).every((type) => type === MessageHeader.RecordBatch));
    t.ok(arrow.bytes!.length < json.bytes!.length / 3, 'a third of the JSON at most');
  });

  t.test('negotiation: Accept and format; JSON, CSV, Arrow among equals; errors stay problems', async (t) => {
    const cases: [string | undefined, 'json' | 'csv' | 'arrow'][] = [
      [undefined, 'json'],
      [ARROW, 'arrow'],
      ['APPLICATION/VND.APACHE.ARROW.STREAM', 'arrow'],
      ['application/*', 'json'],
      ['*/*', 'json'],
      [`${ARROW}, application/json`, 'json'],
      [`${ARROW}, text/csv`, 'csv'],
      [`text/csv, ${ARROW}`, 'csv'],
      [`${ARROW}, */*`, 'json'],
      [`${ARROW}, application/json;q=0.9`, 'arrow'],
      [`${ARROW};q=0.5, text/csv;q=0.4`, 'arrow'],
      [`${ARROW};q=0.4, text/csv;q=0.5`, 'csv'],
      [`${ARROW};q=0.5, */*;q=0.5`, 'json'],
      [`${ARROW}, */*;q=0.1`, 'arrow'],
      [`${ARROW};q=0, */*`, 'json'],
      [`${ARROW};q=0`, 'json'],
      ['application/*, application/json;q=0', 'arrow'],
      ['application/vnd.apache.arrow.file', 'json'],
    ];
    for (const [accept, expected] of cases) {
      const response = await fetchSeries(precise!.identifier, DAY, accept === undefined ? {} : { accept });
      t.equal(response.status, 200);
      const got = isArrow(response)
        ? 'arrow'
        : String(response.headers['content-type']).startsWith('text/csv')
          ? 'csv'
          : 'json';
      t.equal(got, expected, `Accept: ${accept}`);
      t.equal(response.headers.vary, 'Accept, Accept-Encoding');
    }
    for (const [accept, format] of [
      [ARROW, 'json'],
      [ARROW, 'csv'],
      ['application/json', 'arrow'],
      [`${ARROW};q=0`, 'arrow'],
    ] as const) {
      const response = await fetchSeries(precise!.identifier, `${DAY}&format=${format}`, { accept });
      t.equal(isArrow(response), format === 'arrow', `format=${format} over Accept: ${accept}`);
    }
    for (const [query, status] of [
      [`${DAY}&format=parquet`, 400],
      [`${DAY}&format=arrow&format=arrow`, 400],
      ['?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&format=arrow', 400],
    ] as const) {
      const response = await fetchSeries(precise!.identifier, query, { accept: ARROW });
      t.equal(response.status, status, query);
      t.equal(response.headers['content-type'], 'application/problem+json');
    }
    const bad = JSON.parse((await fetchSeries(precise!.identifier, `${DAY}&format=parquet`)).body);
    t.equal(bad.errors.format[0], 'must be json, csv or arrow');
    const missing = await fetchSeries('00000000-0000-4000-8000-000000000000', `${DAY}&format=arrow`);
    t.equal(missing.status, 404);
    t.equal(missing.headers['content-type'], 'application/problem+json');
  });

  t.test('its own ETag; HEAD and 304 as for the other formats', async (t) => {
    const arrow = await fetchSeries(precise!.identifier, DAY, { accept: ARROW });
    const json = await fetchSeries(precise!.identifier, DAY);
    const csv = await fetchSeries(precise!.identifier, `${DAY}&format=csv`);
    t.ok(arrow.headers.etag);
    t.not(arrow.headers.etag, json.headers.etag, 'Arrow and JSON differ');
    t.not(arrow.headers.etag, csv.headers.etag, 'Arrow and CSV differ');
    const byFormat = await fetchSeries(precise!.identifier, `${DAY}&format=arrow`);
    t.equal(
      byFormat.headers.etag,
      arrow.headers.etag,
      'format=arrow and Accept name the same representation',
    );
    const notModified = await fetchSeries(precise!.identifier, `${DAY}&format=arrow`, {
      'if-none-match': arrow.headers.etag!,
    });
    t.equal(notModified.status, 304);
    t.equal(notModified.body, '');
    const notForJson = await fetchSeries(precise!.identifier, DAY, { 'if-none-match': arrow.headers.etag! });
    t.equal(notForJson.status, 200, "Arrow's tag does not match the JSON");
    const head = await send(api.base, 'HEAD', path(precise!.identifier, `${DAY}&format=arrow`), {
      'x-api-key': key,
    });
    t.equal(head.status, 200);
    t.equal(head.headers['content-type'], ARROW);
    t.equal(head.headers.etag, arrow.headers.etag);
    t.equal(head.headers['content-disposition'], arrow.headers['content-disposition']);
  });

  t.test('a late error: no end-of-stream marker, and readers refuse what came', async (t) => {
    const stream = openStream(api.base, path(year!.identifier, `${YEAR}&format=arrow`), key);
    void stream.firstChunk.then(() => stream.pause());
    await stream.firstChunk;
    // The stream's COPY is still running (or waiting, held back): its backend is in the transaction.
    const serving = await until(
      'the stream holds its backend',
      () =>
        sql<{ pid: number }[]>`
          select pid from pg_stat_activity
          where datname = current_database() and query like 'copy (select 0::int4 as tube%'
            and state in ('active', 'idle in transaction')`,
      (rows) => rows.length === 1,
    );
    await sql`select pg_terminate_backend(${serving[0]!.pid})`;
    stream.resume();
    const { complete, bytes } = await stream.done;
    t.notOk(complete, 'the response was cut off');
    t.ok(bytes.length > 0, 'it had begun');
    t.notOk(bytes.subarray(-8).equals(END_OF_STREAM), 'no end-of-stream marker');
    t.throws(() => tableFromIPC(bytes), 'apache-arrow refuses it');
    t.throws(() => pl.readIPCStream(bytes), 'polars refuses it');
    const after = await fetchSeries(precise!.identifier, `${DAY}&format=arrow`);
    t.equal(after.status, 200, 'later requests are served');
  });
});

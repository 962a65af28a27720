/**
 * The series as CSV over real HTTP: the format parameter and the Accept negotiation, the file's bytes
 * (header, CRLF, quoting, times and numbers as in the JSON), the headers of GET and HEAD, its own ETag, a
 * year equal to the JSON row for row under every coding, and pandas reading it with no other option, also
 * by the recipe of docs/clients.md as it stands there.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { addKey, addMeasurements, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { recipe } from '../../helpers/clientGuide.js';
import { get, type HttpResponse, send } from '../../helpers/http.js';

const path = (id: string, query = '') => `/v1/groundwater-monitoring-tubes/${id}/measurements${query}`;
const DAY = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';
const YEAR = '?from=2024-01-01T00:00:00%2B01:00&to=2024-12-31T23:00:00Z';
const HOURS_IN_YEAR = 366 * 24;
const CSV = 'text/csv; charset=utf-8; header=present';
const HEADER = 'observedAt,value,unit,verticalDatum';
const PYTHON = '/usr/bin/python3';

const pandasMissing = spawnSync(PYTHON, ['-c', 'import pandas']).status !== 0;

/** The JSON series as CSV lines would carry it: each value as the JSON's text. */
function jsonAsLines(body: string): string[] {
  const series = JSON.parse(body);
  // The value's text in the JSON, not a re-printed number: read from the body itself.
  const values = [...body.matchAll(/"value":([^}]+)\}/g)].map((match) => match[1]!);
  t.equal(values.length, series.measurements.length);
  return series.measurements.map(
    (m: { observedAt: string }, i: number) =>
      `${m.observedAt},${values[i]},${series.unit},${series.verticalDatum}`,
  );
}

t.test('CSV', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  const [tube, quoted, empty] = await addWell(sql, 'Well', [
    { number: '1' },
    { number: '2', unit: 'cm', verticalDatum: '"TAW", local' },
    { number: '3' },
  ]);
  await addMeasurements(sql, tube!.id, [
    ['2024-01-01T00:00:00Z', '-1.23'],
    ['2024-01-01T00:00:00.000001Z', '0.1'],
    ['2024-01-01T00:00:00.5Z', '12.3456789012345'],
    ['2024-01-01T12:00:00.12Z', '100'],
    ['2024-01-01T23:59:59.999999Z', '1e-7'],
    ['2024-01-02T00:00:00Z', '2'],
  ]);
  await addMeasurements(sql, quoted!.id, [['2024-01-01T06:00:00Z', '-0.001']]);
  const { key } = await addKey(sql, { tubeIds: [tube!.id, quoted!.id, empty!.id] });
  const fetchSeries = (id: string, query: string, headers: Record<string, string> = {}) =>
    get(api.base, path(id, query), { 'x-api-key': key, ...headers });

  const isCsv = (response: HttpResponse) => response.headers['content-type'] === CSV;

  t.test('a day: header, CRLF, times and numbers as in the JSON', async (t) => {
    const response = await fetchSeries(tube!.identifier, `${DAY}&format=csv`);
    t.equal(response.status, 200);
    t.equal(response.headers['content-type'], CSV);
    t.equal(response.headers.vary, 'Accept, Accept-Encoding');
    t.equal(
      response.headers['content-disposition'],
      `attachment; filename="${tube!.identifier}_20240101T000000Z_20240102T000000Z.csv"`,
    );
    t.equal(
      response.body,
      [
        HEADER,
        '2024-01-01T00:00:00Z,-1.23,m,NAP',
        '2024-01-01T00:00:00.000001Z,0.1,m,NAP',
        '2024-01-01T00:00:00.5Z,12.3456789012345,m,NAP',
        '2024-01-01T12:00:00.12Z,100,m,NAP',
        '2024-01-01T23:59:59.999999Z,1e-7,m,NAP',
        '',
      ].join('\r\n'),
    );
    const json = await fetchSeries(tube!.identifier, DAY);
    t.same(response.body.split('\r\n').slice(1, -1), jsonAsLines(json.body), 'the JSON, line for line');
  });

  t.test('unit and vertical datum are quoted as RFC 4180 asks when they need it', async (t) => {
    const response = await fetchSeries(quoted!.identifier, `${DAY}&format=csv`);
    t.equal(response.body, `${HEADER}\r\n2024-01-01T06:00:00Z,-0.001,cm,"""TAW"", local"\r\n`);
  });

  t.test('an empty interval is the header line only', async (t) => {
    const response = await fetchSeries(empty!.identifier, `${DAY}&format=csv`);
    t.equal(response.status, 200);
    t.equal(response.body, `${HEADER}\r\n`);
  });

  t.test('the file name: compact UTC, fractions kept', async (t) => {
    const response = await fetchSeries(
      tube!.identifier.toUpperCase(),
      '?from=2024-01-01T01:00:00.5%2B01:00&to=2024-01-01T00:00:01.000001Z&format=csv',
    );
    t.equal(
      response.headers['content-disposition'],
      `attachment; filename="${tube!.identifier}_20240101T000000.5Z_20240101T000001.000001Z.csv"`,
    );
    t.equal(response.body, `${HEADER}\r\n2024-01-01T00:00:00.5Z,12.3456789012345,m,NAP\r\n`);
  });

  t.test('Accept negotiates the format; format decides over it', async (t) => {
    const cases: [string | undefined, 'csv' | 'json'][] = [
      [undefined, 'json'],
      ['text/csv', 'csv'],
      ['TEXT/CSV', 'csv'],
      ['text/csv; charset=utf-8', 'csv'],
      ['text/*', 'csv'],
      ['application/json', 'json'],
      ['application/*', 'json'],
      ['*/*', 'json'],
      ['text/html', 'json'],
      ['application/xml, image/png', 'json'],
      ['text/csv, application/json', 'json'],
      ['application/json, text/csv', 'json'],
      ['text/csv, */*', 'json'],
      ['text/csv;q=0.5, */*;q=0.5', 'json'],
      ['text/csv, application/json;q=0.9', 'csv'],
      ['text/csv;q=0.9, application/json;q=0.8', 'csv'],
      ['text/csv;q=0.8, application/json;q=0.9', 'json'],
      ['text/csv, */*;q=0.1', 'csv'],
      ['text/csv;q=0, */*', 'json'],
      ['text/csv;q=0', 'json'],
      ['text/*;q=0.9, */*;q=0.1', 'csv'],
      ['*/*, application/json;q=0', 'csv'],
      ['application/json;q=0, text/csv;q=0.001', 'csv'],
      ['text/csv;q=1.5', 'json'],
      ['text/csv;q=abc', 'json'],
      ['text/csv ; q=0.7 , application/json ; q=0.6', 'csv'],
      [',,;q=1, text/csv;;', 'csv'],
    ];
    for (const [accept, expected] of cases) {
      const response = await fetchSeries(tube!.identifier, DAY, accept === undefined ? {} : { accept });
      t.equal(response.status, 200);
      t.equal(isCsv(response) ? 'csv' : 'json', expected, `Accept: ${accept}`);
      if (expected === 'json') t.equal(response.headers['content-type'], 'application/json');
      t.equal(response.headers.vary, 'Accept, Accept-Encoding');
    }
    for (const [accept, format] of [
      ['text/csv', 'json'],
      ['application/json', 'csv'],
      ['text/csv;q=0', 'csv'],
    ] as const) {
      const response = await fetchSeries(tube!.identifier, `${DAY}&format=${format}`, { accept });
      t.equal(isCsv(response) ? 'csv' : 'json', format, `format=${format} over Accept: ${accept}`);
    }
    const json = await fetchSeries(tube!.identifier, `${DAY}&format=json`);
    t.equal(json.body, (await fetchSeries(tube!.identifier, DAY)).body, 'format=json is the JSON of 1.0.0');
  });

  t.test('a bad or repeated format is a 400 keyed format, as a problem even for text/csv', async (t) => {
    for (const [query, message] of [
      ['&format=CSV', /^must be json, csv or arrow$/],
      ['&format=xml', /^must be json, csv or arrow$/],
      ['&format=', /^must be json, csv or arrow$/],
      ['&format=csv&format=csv', /more than once/],
      ['&format=csv&format=json', /more than once/],
    ] as const) {
      const response = await fetchSeries(tube!.identifier, `${DAY}${query}`, { accept: 'text/csv' });
      t.equal(response.status, 400, query);
      t.equal(response.headers['content-type'], 'application/problem+json');
      const body = JSON.parse(response.body);
      t.same(Object.keys(body.errors), ['format'], query);
      t.match(body.errors.format[0], message);
    }
    const both = JSON.parse((await fetchSeries(tube!.identifier, '?from=x&format=x')).body);
    t.same(Object.keys(both.errors), ['from', 'to', 'format'], 'with the others, in the order of the query');
    const tooLong = await fetchSeries(
      tube!.identifier,
      '?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&format=xml',
    );
    t.same(
      Object.keys(JSON.parse(tooLong.body).errors),
      ['format', 'to'],
      'a bad format hides no other error',
    );
    const missing = await fetchSeries('00000000-0000-4000-8000-000000000000', DAY, { accept: 'text/csv' });
    t.equal(missing.status, 404);
    t.equal(missing.headers['content-type'], 'application/problem+json');
  });

  t.test('HEAD: the headers of GET, for every format and coding', async (t) => {
    for (const headers of <Record<string, string>[]>[
      { accept: 'text/csv' },
      { accept: 'text/csv', 'accept-encoding': 'gzip' },
      { accept: 'application/json', 'accept-encoding': 'br' },
    ]) {
      const request = { 'x-api-key': key, ...headers };
      const head = await send(api.base, 'HEAD', path(tube!.identifier, DAY), request);
      const getResponse = await get(api.base, path(tube!.identifier, DAY), request);
      t.equal(head.status, 200);
      t.equal(head.body, '');
      for (const name of ['content-type', 'content-disposition', 'content-encoding', 'vary']) {
        t.equal(head.headers[name], getResponse.headers[name], `${name} for ${JSON.stringify(headers)}`);
      }
    }
  });

  t.test('conditional requests: a tag per format, a 304 per format', async (t) => {
    const csv = await fetchSeries(tube!.identifier, DAY, { accept: 'text/csv' });
    const json = await fetchSeries(tube!.identifier, DAY);
    t.ok(csv.headers.etag && json.headers.etag, 'both tagged');
    t.not(csv.headers.etag, json.headers.etag, 'CSV and JSON are different representations');
    t.equal(
      (await fetchSeries(tube!.identifier, `${DAY}&format=csv`)).headers.etag,
      csv.headers.etag,
      'format=csv and Accept: text/csv name the same representation',
    );
    const notModified = await fetchSeries(tube!.identifier, DAY, {
      accept: 'text/csv',
      'if-none-match': String(csv.headers.etag),
    });
    t.equal(notModified.status, 304);
    t.equal(notModified.headers.vary, 'Accept, Accept-Encoding');
    t.equal(notModified.body, '');
    const otherFormat = await fetchSeries(tube!.identifier, DAY, {
      'if-none-match': String(csv.headers.etag),
    });
    t.equal(otherFormat.status, 200, "the CSV's tag does not match the JSON");
    t.equal(otherFormat.headers['content-type'], 'application/json');
  });

  t.test('a year: the JSON row for row, under every coding', async (t) => {
    const [hourly] = await addWell(sql, 'Hourly', [{ number: '1' }]);
    await addRegularSeries(sql, hourly!.id, '2023-12-31T00:00:00Z', '2025-01-02T00:00:00Z', '1 hour');
    await addMeasurements(sql, hourly!.id, [['2024-06-01T00:00:00.25Z', '1e-7']]);
    const reader = await addKey(sql, { tubeIds: [hourly!.id] });
    const asReader = (query: string, headers: Record<string, string> = {}) =>
      get(api.base, path(hourly!.identifier, query), { 'x-api-key': reader.key, ...headers });

    const json = await asReader(YEAR);
    const expected = jsonAsLines(json.body);
    t.equal(expected.length, HOURS_IN_YEAR + 1, 'the fixture: one row an hour, and one more');
    const csv = await asReader(`${YEAR}&format=csv`);
    t.equal(csv.status, 200);
    t.equal(csv.headers['transfer-encoding'], 'chunked', 'streamed');
    const lines = csv.body.split('\r\n');
    t.equal(lines[0], HEADER);
    t.equal(lines.at(-1), '', 'ends with CRLF');
    t.same(lines.slice(1, -1), expected, 'every row as the JSON writes it');
    t.ok(lines.includes('2024-06-01T00:00:00.25Z,1e-7,m,NAP'), 'a fraction and an exponent among them');

    for (const [coding, decode] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const compressed = await asReader(YEAR, { accept: 'text/csv', 'accept-encoding': coding });
      t.equal(compressed.headers['content-encoding'], coding);
      t.equal(compressed.headers['content-type'], CSV);
      t.ok(compressed.bytes!.length < csv.body.length / 4, `${coding} compresses the repeated columns`);
      t.equal(decode(compressed.bytes!).toString(), csv.body, `${coding} decodes to the same CSV`);
    }
  });

  t.test('an aggregated year: the buckets of the JSON, with min, max and count', async (t) => {
    const query = `${YEAR}&aggregate=P1D`;
    const [quarterly] = await addWell(sql, 'Quarter-hourly', [{ number: '1' }]);
    await addRegularSeries(sql, quarterly!.id, '2023-12-31T00:00:00Z', '2025-01-02T00:00:00Z', '15 minutes');
    const reader = await addKey(sql, { tubeIds: [quarterly!.id] });
    const asReader = (extra: string, headers: Record<string, string> = {}) =>
      get(api.base, path(quarterly!.identifier, `${query}${extra}`), { 'x-api-key': reader.key, ...headers });
    const buckets = (await asReader('')).body;
    // The JSON's own text of each bucket, in order.
    const expected = [
      ...buckets.matchAll(
        /\{"observedAt":"([^"]+)","value":([^,]+),"min":([^,]+),"max":([^,]+),"count":(\d+)\}/g,
      ),
    ].map((match) => `${match.slice(1).join(',')},m,NAP`);
    t.equal(expected.length, 366, 'a bucket a day');
    const csv = await asReader('', { accept: 'text/csv' });
    const lines = csv.body.split('\r\n');
    t.equal(lines[0], 'observedAt,value,min,max,count,unit,verticalDatum');
    t.same(lines.slice(1), [...expected, ''], 'every bucket as the JSON writes it, then the final CRLF');
    t.equal((await asReader('&format=csv')).body, csv.body);
  });

  const skip = pandasMissing && !process.env.CI && `${PYTHON} has no pandas (Debian package python3-pandas)`;
  t.test('pandas.read_csv reads it with no other option', { skip }, async (t) => {
    if (pandasMissing)
      return void t.fail('pandas is missing, and CI must run this test: .ci/run installs it');
    const script = `
import json, os, pandas
frame = pandas.read_csv(os.environ["SERIES_URL"] + "&format=csv", storage_options={"X-API-Key": os.environ["API_KEY"]}, parse_dates=["observedAt"])
print(json.dumps({
  "rows": len(frame),
  "dtypes": {name: str(dtype) for name, dtype in frame.dtypes.items()},
  "first": [frame["observedAt"].iloc[0].isoformat(), frame["value"].iloc[0]],
  "last": [frame["observedAt"].iloc[-1].isoformat(), frame["value"].iloc[-1]],
  "units": sorted(set(frame["unit"])),
  "datums": sorted(set(frame["verticalDatum"])),
}))`;
    // Asynchronously: the server answering pandas runs in this process.
    const run = async (identifier: string, query = DAY) => {
      const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], {
        env: { SERIES_URL: `${api.base}${path(identifier, query)}`, API_KEY: key },
      });
      return JSON.parse(stdout);
    };
    t.same(await run(tube!.identifier), {
      rows: 5,
      dtypes: {
        observedAt: 'datetime64[ns, UTC]',
        value: 'float64',
        unit: 'object',
        verticalDatum: 'object',
      },
      first: ['2024-01-01T00:00:00+00:00', -1.23],
      last: ['2024-01-01T23:59:59.999999+00:00', 1e-7],
      units: ['m'],
      datums: ['NAP'],
    });
    const quotedFrame = await run(quoted!.identifier);
    t.same([quotedFrame.units, quotedFrame.datums], [['cm'], ['"TAW", local']], 'quoted fields read back');
    const daily = await run(tube!.identifier, `${DAY}&aggregate=P1D`);
    t.same(
      [daily.rows, Object.keys(daily.dtypes), daily.dtypes.observedAt, daily.dtypes.count, daily.first],
      [
        1,
        ['observedAt', 'value', 'min', 'max', 'count', 'unit', 'verticalDatum'],
        'datetime64[ns, UTC]',
        'int64',
        ['2024-01-01T00:00:00+00:00', (-1.23 + 0.1 + 12.3456789012345 + 100 + 1e-7) / 5],
      ],
      'an aggregated series too: one daily bucket, its mean',
    );
  });

  t.test('the pandas recipe of the client guide', { skip }, async (t) => {
    if (pandasMissing)
      return void t.fail('pandas is missing, and CI must run this test: .ci/run installs it');
    const directory = t.testdir({ 'series.py': recipe('series.py') });
    const script = `
import json, runpy
frames = runpy.run_path("series.py")
series, daily = frames["series"], frames["daily"]
print(json.dumps({
  "series": {name: str(dtype) for name, dtype in series.dtypes.items()},
  "rows": [[at.isoformat(), value] for at, value in zip(series["observedAt"], series["value"])],
  "daily": {name: str(dtype) for name, dtype in daily.dtypes.items()},
  "counts": [int(count) for count in daily["count"]],
}))`;
    // Asynchronously: the server answering pandas runs in this process.
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], {
      cwd: directory,
      env: { BASE: `${api.base}/v1`, KEY: key, TUBE_ID: tube!.identifier },
    });
    t.same(JSON.parse(stdout), {
      series: {
        observedAt: 'datetime64[ns, UTC]',
        value: 'float64',
        unit: 'object',
        verticalDatum: 'object',
      },
      rows: [
        ['2024-01-01T00:00:00+00:00', -1.23],
        ['2024-01-01T00:00:00.000001+00:00', 0.1],
        ['2024-01-01T00:00:00.500000+00:00', 12.3456789012345],
        ['2024-01-01T12:00:00.120000+00:00', 100],
        ['2024-01-01T23:59:59.999999+00:00', 1e-7],
        ['2024-01-02T00:00:00+00:00', 2],
      ],
      daily: {
        observedAt: 'datetime64[ns, UTC]',
        value: 'float64',
        min: 'float64',
        max: 'int64', // both days' maximum is a whole number (100, 2), which pandas reads as one
        count: 'int64',
        unit: 'object',
        verticalDatum: 'object',
      },
      counts: [5, 1],
    });
  });
});

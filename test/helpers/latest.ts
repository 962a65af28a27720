/**
 * Latest over real HTTP: its path, the answer the database gives without latest_measurements (the
 * oracle), and each format read by real readers (apache-arrow, polars, pandas, GDAL/OGR, geopandas),
 * compared with the JSON of the same request value for value.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { MessageHeader, tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { STATUSES } from '../../src/engine/schemas.js';
import { arrowColumn, messageTypes, micros, mismatches } from './arrow.js';
import { get, type HttpResponse } from './http.js';
import { csvFields, decoded, decodedBytes } from './network.js';

export const LATEST = '/v1/groundwater-monitoring-measurements/latest';

export const PYTHON = '/usr/bin/python3';
export const geopandasMissing = spawnSync(PYTHON, ['-c', 'import geopandas']).status !== 0;
export const ogrMissing = spawnSync('ogr2ogr', ['--version']).status !== 0;

/** One element of latest's JSON. */
export interface LatestRow {
  tubeIdentifier: string;
  observedAt: string;
  value: number;
  status?: string;
  unit: string;
  verticalDatum: string;
}

/**
 * latest_measurements made anew from measurements, for fixtures written straight into measurements
 * (testkit/fixtures.ts), which no writer's transaction kept: the latest of each tube and status.
 */
export async function refreshLatest(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`delete from latest_measurements`;
    await tx`
      insert into latest_measurements (tube_id, status, observed_at, value)
      select distinct on (tube_id, status) tube_id, status, observed_at, measurement_value(value, value_thousandths)
      from measurements order by tube_id, status, observed_at desc`;
  });
}

/**
 * What latest must answer, asked of measurements directly ("order by observed_at desc limit 1" per
 * tube): for each of `tubes` (identifiers in discovery's order) its latest measurement among
 * `statuses`, as the JSON writes it; tubes without one left out.
 */
export async function expectedLatest(
  sql: Sql,
  tubes: readonly string[],
  statuses: readonly string[] = STATUSES,
): Promise<LatestRow[]> {
  const codes = statuses.map((status) => STATUSES.indexOf(status as (typeof STATUSES)[number]));
  const rows = await sql<(LatestRow & { status: number })[]>`
    select t.identifier::text as "tubeIdentifier",
           to_char(m.observed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "observedAt",
           m.value, m.status, t.unit, t.vertical_datum as "verticalDatum"
    from unnest(${tubes as string[]}::uuid[]) with ordinality as listed(identifier, position)
    join tubes t on t.identifier = listed.identifier
    cross join lateral (
      select observed_at, measurement_value(value, value_thousandths) as value, status from measurements
      where tube_id = t.id and status = any(${codes}::int2[])
      order by observed_at desc limit 1
    ) m
    order by listed.position`;
  // RFC 3339 as the service writes it: the fraction only when not zero, without trailing zeros.
  return rows.map(({ status, ...row }) => ({
    ...row,
    observedAt: row.observedAt.replace(/\.?0+Z$/, 'Z'),
    status: STATUSES[status]!,
  }));
}

/** The JSON's rows without `status`, for a request without include=status. */
export const withoutStatus = (rows: LatestRow[]) => rows.map(({ status: _, ...row }) => row);

const execFileAsync = promisify(execFile);

/**
 * Latest at `query` (`tubes=…&status=…`, without `format`) in every format, each read by real readers
 * and compared with the JSON, which must be `expected`. Returns the responses by format.
 */
export async function provesLatestFormats(
  t: Test,
  base: string,
  key: string,
  query: string,
  expected: LatestRow[],
  headers: Record<string, string> = {},
): Promise<Record<string, HttpResponse>> {
  const as = { 'x-api-key': key, ...headers };
  const path = (format: string) => `${LATEST}?${query}${query ? '&' : ''}format=${format}`;
  const withStatus = /(^|&)include=status(&|$)/.test(query);
  const columns = [
    'tubeIdentifier',
    'observedAt',
    'value',
    ...(withStatus ? ['status'] : []),
    'unit',
    'verticalDatum',
  ];
  const responses: Record<string, HttpResponse> = {};
  /** Latest in `format`, kept by format: a 200 of `type`, and a download named `file` where it is one. */
  const served = async (format: string, label: string, type: string, file?: string) => {
    const response = await get(base, path(format), as);
    responses[format] = response;
    t.equal(response.status, 200, `${label}: 200`);
    t.equal(response.headers['content-type'], type);
    if (file) t.equal(response.headers['content-disposition'], `attachment; filename="${file}"`);
    return response;
  };

  const jsonResponse = await served('json', 'JSON', 'application/json');
  const json = JSON.parse(decoded(jsonResponse)) as LatestRow[];
  t.same(json, expected, 'the JSON: the latest of each tube, in discovery order');
  t.same(
    json.map((row) => Object.keys(row)),
    json.map(() => columns),
    'each object with its fields in order',
  );

  const csvResponse = await served(
    'csv',
    'CSV',
    'text/csv; charset=utf-8; header=present',
    'groundwater-latest-measurements.csv',
  );
  const csv = decoded(csvResponse);
  t.ok(csv.endsWith('\r\n'), 'a whole CSV ends in CRLF');
  const lines = csv.split('\r\n').slice(0, -1);
  t.equal(lines[0], columns.join(','), 'the header line');
  const jsonText = decoded(jsonResponse);
  const numbers = [...jsonText.matchAll(/"value":([^,}]+)/g)].map((match) => match[1]!);
  t.same(
    lines.slice(1).map(csvFields),
    json.map((row, i) =>
      columns.map((column) => (column === 'value' ? numbers[i] : String(row[column as keyof LatestRow]))),
    ),
    "the CSV row for row the JSON, each value the JSON's text",
  );

  const arrowResponse = await served(
    'arrow',
    'Arrow',
    'application/vnd.apache.arrow.stream',
    'groundwater-latest-measurements.arrows',
  );
  provesArrowAsJson(t, decodedBytes(arrowResponse), json, columns);

  const geoResponse = await served('geojson', 'GeoJSON', 'application/geo+json');
  const collection = JSON.parse(decoded(geoResponse));
  t.equal(collection.type, 'FeatureCollection');
  t.same(
    collection.features.map((feature: { properties: Record<string, unknown> }) => {
      const { wellName: _w, tubeNumber: _n, ...properties } = feature.properties;
      return properties;
    }),
    json,
    "each Feature's properties: the JSON's object, then wellName and tubeNumber",
  );

  const pythonEnv = { KEY: key, URL: `${base}${path('csv')}` };
  const skipPandas = geopandasMissing && !process.env.CI;
  if (!skipPandas) {
    const { stdout } = await execFileAsync(PYTHON, ['-c', PANDAS_CSV], { env: pythonEnv });
    const frame = JSON.parse(stdout) as [string, number, number, string | null][];
    t.same(
      frame,
      json.map((row) => [row.tubeIdentifier, Number(micros(row.observedAt)), row.value, row.status ?? null]),
      'pandas reads the CSV: identifiers, instants to the µs and values as the JSON',
    );
  }
  return responses;
}

/** pandas reads the CSV from URL with the key header: identifier, µs since 1970, value, status. */
const PANDAS_CSV = `
import io, json, os, urllib.request, pandas
body = urllib.request.urlopen(urllib.request.Request(os.environ["URL"], headers={"X-API-Key": os.environ["KEY"]})).read()
frame = pandas.read_csv(io.BytesIO(body), parse_dates=["observedAt"])
status = frame.status if "status" in frame else [None] * len(frame)
print(json.dumps([[t, int(at.value // 1000), v, s] for t, at, v, s in zip(frame.tubeIdentifier, frame.observedAt, frame.value, status)]))
`;

const STRINGS = ['tubeIdentifier', 'unit', 'verticalDatum'] as const;

/** Latest's Arrow read by apache-arrow and polars, value for value the JSON. */
function provesArrowAsJson(t: Test, arrow: Buffer, json: LatestRow[], columns: string[]) {
  const types = messageTypes(arrow);
  const dictionaries = columns.length - 2;
  t.same(
    types.slice(0, 1 + dictionaries),
    [MessageHeader.Schema, ...Array(dictionaries).fill(MessageHeader.DictionaryBatch)],
    'the schema, then each dictionary once, whole',
  );
  t.notOk(
    types.slice(1 + dictionaries).includes(MessageHeader.DictionaryBatch),
    'no dictionary after the first batch',
  );
  t.same(arrow.subarray(-8), Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), 'the end-of-stream marker');
  const table = tableFromIPC(arrow);
  const typeOf: Record<string, string> = {
    observedAt: 'Timestamp<MICROSECOND, UTC>',
    value: 'Float64',
    status: 'Dictionary<Int8, Utf8>',
  };
  t.same(
    table.schema.fields.map((field) => [field.name, String(field.type), field.nullable]),
    columns.map((name) => [name, typeOf[name] ?? 'Dictionary<Int32, Utf8>', false]),
    'the columns, none nullable',
  );
  t.equal(table.numRows, json.length, 'apache-arrow: every row');
  for (const name of [...STRINGS, ...(columns.includes('status') ? (['status'] as const) : [])]) {
    t.same(
      [...table.getChild(name)!.toArray()],
      json.map((row) => row[name]),
      `apache-arrow: every ${name}`,
    );
  }
  const instants = json.map((row) => micros(row.observedAt));
  t.equal(mismatches(arrowColumn(table, 'observedAt'), instants), 0, 'apache-arrow: instants to the µs');
  const values = json.map((row) => row.value);
  t.equal(mismatches(arrowColumn(table, 'value'), values), 0, 'apache-arrow: values bit for bit');

  const frame = pl.readIPCStream(arrow);
  t.same(frame.columns, columns, 'polars reads the columns');
  t.equal(frame.height, json.length, 'polars: every row');
  if (json.length === 0) return;
  for (const name of STRINGS) {
    t.same(
      frame.getColumn(name).cast(pl.Utf8).toArray(),
      json.map((row) => row[name]),
      `polars: every ${name}`,
    );
  }
  const polarsInstants = frame.getColumn('observedAt').cast(pl.Int64).toArray() as unknown as number[];
  t.equal(mismatches(polarsInstants, instants), 0, 'polars: instants to the µs');
  t.equal(
    mismatches(frame.getColumn('value').toArray() as number[], values),
    0,
    'polars: values bit for bit',
  );
}

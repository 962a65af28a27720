/**
 * The network endpoint's body against the series endpoint's, over real HTTP, the same on every storage
 * path: the JSON is its head and then, byte for byte, the series of each tube; the CSV is the series'
 * CSV lines of each tube behind its identifier, and row for row the JSON.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { addMeasurements, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { get, type HttpResponse } from './http.js';

export const NETWORK = '/v1/groundwater-monitoring-measurements';

export interface NetworkQuery {
  from: string;
  to: string;
  aggregate?: string;
  tubes?: string[];
}

const queryText = ({ from, to, aggregate, tubes }: NetworkQuery) =>
  `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}` +
  (aggregate ? `&aggregate=${aggregate}` : '') +
  (tubes ? `&tubes=${tubes.join(',')}` : '');

export const networkPath = (query: NetworkQuery, extra = '') => `${NETWORK}?${queryText(query)}${extra}`;

const seriesPath = (tube: string, query: NetworkQuery, extra = '') =>
  `/v1/groundwater-monitoring-tubes/${tube}/measurements?${queryText({ ...query, tubes: undefined })}${extra}`;

/** A body's bytes as they came, decoded from its content coding. */
export function decodedBytes(response: HttpResponse): Buffer {
  const bytes = response.bytes!;
  const coding = response.headers['content-encoding'];
  if (coding === 'gzip') return gunzipSync(bytes);
  if (coding === 'br') return brotliDecompressSync(bytes);
  return bytes;
}

/** A body as it came, decoded from its content coding, as text. */
export const decoded = (response: HttpResponse): string => decodedBytes(response).toString();

/** The fields of one CSV line (RFC 4180: quoted fields with doubled quotes). */
export function csvFields(line: string): string[] {
  const fields: string[] = [];
  const field = /("(?:[^"]|"")*"|[^,]*)(,|$)/y;
  while (field.lastIndex < line.length) {
    const match = field.exec(line)!;
    const text = match[1]!;
    fields.push(text.startsWith('"') ? text.slice(1, -1).replaceAll('""', '"') : text);
    if (match[2] === '') break;
  }
  if (line.endsWith(',')) fields.push('');
  return fields;
}

/**
 * Checks the network response for `query` against the series endpoint, and returns its JSON. `tubes`:
 * the identifiers the response must hold, in its order.
 */
export async function provesNetworkBody(
  t: Test,
  base: string,
  key: string,
  query: NetworkQuery,
  tubes: readonly string[],
  headers: Record<string, string> = {},
): Promise<{ series: { tubeIdentifier: string; measurements: unknown[] }[] }> {
  const as = { 'x-api-key': key, ...headers };
  const response = await get(base, networkPath(query), as);
  t.equal(response.status, 200, 'a 200');
  t.equal(response.headers['content-type'], 'application/json');
  const token = String(response.headers['sync-token']);
  const body = decoded(response);
  const network = JSON.parse(body);
  t.equal(network.syncToken, token, 'the body holds the token of Sync-Token');

  const seriesBodies: string[] = [];
  const seriesCsv: string[] = [];
  for (const tube of tubes) {
    const series = await get(base, seriesPath(tube, query), as);
    t.equal(series.status, 200);
    seriesBodies.push(decoded(series));
    seriesCsv.push(decoded(await get(base, seriesPath(tube, query, '&format=csv'), as)));
  }
  const head =
    `{"from":${JSON.stringify(network.from)},"to":${JSON.stringify(network.to)},` +
    (query.aggregate ? `"aggregate":"${query.aggregate}",` : '') +
    `"syncToken":${JSON.stringify(token)},"series":[`;
  t.equal(body, `${head}${seriesBodies.join(',')}]}`, "each element byte for byte the series endpoint's");

  const csvResponse = await get(base, networkPath(query, '&format=csv'), as);
  t.equal(csvResponse.status, 200);
  t.match(csvResponse.headers['content-type'], /^text\/csv/);
  const csv = decoded(csvResponse);
  const columns = query.aggregate
    ? 'observedAt,value,min,max,count,unit,verticalDatum'
    : 'observedAt,value,unit,verticalDatum';
  const lines = seriesCsv.flatMap((file, i) =>
    file
      .split('\r\n')
      .slice(1, -1)
      .map((line) => `${tubes[i]},${line}`),
  );
  t.equal(
    csv,
    `${[`tubeIdentifier,${columns}`, ...lines].join('\r\n')}\r\n`,
    "the series' CSV lines behind each identifier",
  );

  // Row for row the JSON: every number as the JSON's text of it.
  const numbers = (text: string) => [...text.matchAll(/"(value|min|max|count)":([^,}]+)/g)].map((m) => m[2]!);
  const fromJson = network.series.flatMap(
    (
      series: {
        tubeIdentifier: string;
        unit: string;
        verticalDatum: string;
        measurements: { observedAt: string }[];
      },
      i: number,
    ) => {
      const texts = numbers(seriesBodies[i]!.slice(seriesBodies[i]!.indexOf('"measurements"')));
      const width = query.aggregate ? 4 : 1;
      return series.measurements.map((m, row) => [
        series.tubeIdentifier,
        m.observedAt,
        ...texts.slice(row * width, (row + 1) * width),
        series.unit,
        series.verticalDatum,
      ]);
    },
  );
  const fromCsv = csv.split('\r\n').slice(1, -1).map(csvFields);
  t.same(fromCsv, fromJson, 'the CSV row for row the JSON');
  return network;
}

/**
 * A network whose discovery order differs from its text order (wells `B 2` before `B 10`, tubes `2`
 * before `10`): in B 10 a tube of precise values (microseconds, 15 digits, at and beyond the bounds of
 * January 2024 from local midnight), one without measurements, one in cm with a datum CSV must quote;
 * in B 2 three days of minutes, more than a batch, so the tube after it starts inside one. `inOrder`:
 * their identifiers in discovery's order.
 */
export async function addOrderedNetwork(sql: Sql) {
  const [precise, empty, quoted] = await addWell(sql, 'B 10', [
    { number: '1' },
    { number: '2' },
    { number: '10', unit: 'cm', verticalDatum: '"TAW", local' },
  ]);
  const [long] = await addWell(sql, 'B 2', [{ number: '1' }]);
  await addMeasurements(sql, precise!.id, [
    ['2023-12-31T22:59:59.999999Z', '1'],
    ['2023-12-31T23:00:00Z', '-1.23'],
    ['2024-01-01T00:00:00.000001Z', '0.1'],
    ['2024-01-01T00:00:00.5Z', '12.3456789012345'],
    ['2024-01-01T06:00:00Z', '123456789.123456'],
    ['2024-01-01T06:30:00.123456Z', '-0.001'],
    ['2024-01-15T12:00:00.12Z', '100'],
    ['2024-01-31T23:59:59.999999Z', '1e-7'],
    ['2024-02-01T00:00:00Z', '2'],
  ]);
  await addMeasurements(sql, quoted!.id, [
    ['2024-01-02T06:00:00Z', '-0.001'],
    ['2024-01-02T07:00:00Z', '5'],
  ]);
  await addRegularSeries(sql, long!.id, '2024-01-10T00:00:00Z', '2024-01-13T00:00:00Z', '1 minute');
  const tubes = { precise: precise!, empty: empty!, quoted: quoted!, long: long! };
  return { ...tubes, inOrder: [long!, precise!, empty!, quoted!].map((tube) => tube.identifier) };
}

/** January 2024 from local midnight (+01:00): the interval addOrderedNetwork's bounds are set for. */
export const LOCAL_JANUARY = { from: '2024-01-01T00:00:00+01:00', to: '2024-02-01T00:00:00Z' };

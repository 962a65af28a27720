/**
 * `aggregate` over real HTTP on plain PostgreSQL: buckets from `from`, cut at `to`, numbers and times
 * as raw series write them, the head field, validation, HEAD, compression and the order of checks. The
 * TimescaleDB path is compared with this one in test/db/aggregateBuckets.test.ts.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { AGGREGATE_SECONDS, AGGREGATES } from '../../../src/contract.js';
import { formatInstant, instantOfMicros } from '../../../src/domain/datetime.js';
import { addKey, addMeasurements, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, type HttpResponse, send } from '../../helpers/http.js';
import { seededRandom } from '../../helpers/random.js';

const path = (id: string, query = '') => `/v1/groundwater-monitoring-tubes/${id}/measurements${query}`;
const q = (from: string, to: string, aggregate?: string) =>
  `?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}` +
  (aggregate === undefined ? '' : `&aggregate=${encodeURIComponent(aggregate)}`);
/** Three local days of Amsterdam in winter. */
const LOCAL_DAYS = ['2024-01-01T00:00:00+01:00', '2024-01-04T00:00:00+01:00'] as const;

t.test('aggregate', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  const [tube, year] = await addWell(sql, 'Well', [{ number: '1' }, { number: '2', unit: 'cm' }]);
  const [hidden] = await addWell(sql, 'Hidden', [{ number: '1' }]);
  await addMeasurements(sql, tube!.id, [
    ['2023-12-31T22:59:59.999999Z', '9'], // before from
    ['2023-12-31T23:00:00Z', '0.1'], // at from: the first local day
    ['2024-01-01T12:00:00Z', '0.2'],
    ['2024-01-01T22:59:59.999999Z', '-4'],
    ['2024-01-01T23:00:00Z', '1e-7'], // the second local day starts
    // the third local day holds nothing
    ['2024-01-03T22:59:59.999999Z', '12.5'], // the last microsecond before to
    ['2024-01-03T23:00:00Z', '7'], // at to: outside
  ]);
  await addRegularSeries(sql, year!.id, '2024-01-01T00:00:00Z', '2025-01-02T00:00:00Z', '1 hour');
  const reader = await addKey(sql, { tubeIds: [tube!.id, year!.id] });
  const nothing = await addKey(sql);
  const as = (key: string) => ({ 'x-api-key': key });
  const fetchSeries = (id: string, query: string, headers: Record<string, string> = {}) =>
    get(api.base, path(id, query), { ...as(reader.key), ...headers });

  const problem = (response: HttpResponse, status: number) => {
    t.equal(response.status, status, `status ${status}`);
    t.equal(response.headers['content-type'], 'application/problem+json');
    return JSON.parse(response.body);
  };

  t.test('local days: buckets from from, empty ones left out, the last cut at to', async (t) => {
    const response = await fetchSeries(tube!.identifier, q(...LOCAL_DAYS, 'P1D'));
    t.equal(response.status, 200);
    t.equal(response.headers['content-type'], 'application/json');
    t.equal(
      response.body,
      `{"tubeIdentifier":"${tube!.identifier}","from":"2023-12-31T23:00:00Z","to":"2024-01-03T23:00:00Z",` +
        '"unit":"m","verticalDatum":"NAP","aggregate":"P1D","measurements":[' +
        // (0.1 + 0.2 + -4) / 3 in doubles, summed in time order, and its shortest text.
        `{"observedAt":"2023-12-31T23:00:00Z","value":${(0.1 + 0.2 + -4) / 3},"min":-4,"max":0.2,"count":3},` +
        '{"observedAt":"2024-01-01T23:00:00Z","value":1e-7,"min":1e-7,"max":1e-7,"count":1},' +
        '{"observedAt":"2024-01-02T23:00:00Z","value":12.5,"min":12.5,"max":12.5,"count":1}]}',
      'exactly these bytes',
    );
  });

  t.test('a from with microseconds starts every bucket on its microsecond', async (t) => {
    const from = '2023-12-31T23:59:59.999999Z';
    const series = JSON.parse((await fetchSeries(tube!.identifier, q(from, LOCAL_DAYS[1], 'PT1H'))).body);
    t.same(
      series.measurements.map((m: { observedAt: string; count: number }) => [m.observedAt, m.count]),
      [
        ['2024-01-01T11:59:59.999999Z', 1],
        ['2024-01-01T22:59:59.999999Z', 2],
        ['2024-01-03T22:59:59.999999Z', 1],
      ],
    );
  });

  t.test('an interval without measurements: the head, with aggregate, and no buckets', async (t) => {
    const response = await fetchSeries(
      tube!.identifier,
      q('2020-01-01T00:00:00Z', '2020-01-08T00:00:00Z', 'P7D'),
    );
    t.equal(response.status, 200);
    t.same(JSON.parse(response.body), {
      tubeIdentifier: tube!.identifier,
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-08T00:00:00Z',
      aggregate: 'P7D',
      unit: 'm',
      verticalDatum: 'NAP',
      measurements: [],
    });
  });

  t.test('without aggregate the series is written as in 1.0.0', async (t) => {
    const response = await fetchSeries(tube!.identifier, q('2024-01-01T23:00:00Z', '2024-01-01T23:00:01Z'));
    t.equal(
      response.body,
      `{"tubeIdentifier":"${tube!.identifier}","from":"2024-01-01T23:00:00Z","to":"2024-01-01T23:00:01Z",` +
        '"unit":"m","verticalDatum":"NAP","measurements":[{"observedAt":"2024-01-01T23:00:00Z","value":1e-7}]}',
    );
  });

  t.test('each aggregate of a 366-day year equals the buckets of its raw series', async (t) => {
    const random = seededRandom(16);
    for (const aggregate of AGGREGATES) {
      // A from anywhere in the first day, to a microsecond, and the longest interval allowed.
      const fromMicros = Date.parse('2024-01-01T00:00:00Z') * 1000 + Math.floor(random() * 86_400e6);
      const start = instantOfMicros(fromMicros);
      const from = formatInstant(start);
      const to = formatInstant({
        seconds: start.seconds + 366 * 86_400,
        micros: start.micros,
      });
      const raw = JSON.parse((await fetchSeries(year!.identifier, q(from, to))).body);
      const stride = AGGREGATE_SECONDS[aggregate] * 1e6;
      const expected: { observedAt: string; value: number; min: number; max: number; count: number }[] = [];
      let values: number[] = [];
      let bucket = -1;
      const close = () => {
        if (values.length === 0) return;
        const at = fromMicros + bucket * stride;
        expected.push({
          observedAt: formatInstant(instantOfMicros(at)),
          value: values.reduce((sum, value) => sum + value, 0) / values.length,
          min: Math.min(...values),
          max: Math.max(...values),
          count: values.length,
        });
      };
      for (const { observedAt, value } of raw.measurements as { observedAt: string; value: number }[]) {
        const at = Date.parse(observedAt) * 1000;
        const index = Math.floor((at - fromMicros) / stride);
        if (index !== bucket) {
          close();
          values = [];
          bucket = index;
        }
        values.push(value);
      }
      close();
      const response = await fetchSeries(year!.identifier, q(from, to, aggregate));
      const series = JSON.parse(response.body);
      t.same({ ...series, measurements: undefined }, { ...raw, aggregate, measurements: undefined });
      t.ok(expected.length > 50, `${aggregate} from ${from}: ${expected.length} buckets`);
      t.same(series.measurements, expected, `${aggregate} from ${from}`);
    }
  });

  t.test('the documented examples: the aggregate of the raw one is what the service answers', async (t) => {
    const document = JSON.parse((await get(api.base, '/v1/openapi.json')).body);
    const { examples } =
      document.paths['/groundwater-monitoring-tubes/{tubeIdentifier}/measurements'].get.responses['200']
        .content['application/json'];
    const raw = examples.measurements.value;
    const [example] = await addWell(sql, 'Example', [{ number: '1' }]);
    await addMeasurements(
      sql,
      example!.id,
      raw.measurements.map((m: { observedAt: string; value: number }) => [m.observedAt, String(m.value)]),
    );
    const { key } = await addKey(sql, { tubeIds: [example!.id] });
    const answer = await fetchSeries(example!.identifier, q(raw.from, raw.to, 'PT1H'), as(key));
    t.same(
      { ...JSON.parse(answer.body), tubeIdentifier: raw.tubeIdentifier },
      examples.aggregated.value,
      'as documented',
    );
  });

  t.test('gzip and br carry the same series', async (t) => {
    const query = q(...LOCAL_DAYS, 'PT15M');
    const identity = await fetchSeries(year!.identifier, query);
    for (const [coding, decode] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const response = await fetchSeries(year!.identifier, query, { 'accept-encoding': coding });
      t.equal(response.headers['content-encoding'], coding);
      t.equal(decode(response.bytes!).toString(), identity.body, coding);
    }
  });

  t.test('each bad aggregate is a 400 that names it; with other faults, each is named', async (t) => {
    const id = tube!.identifier;
    const bad = ['p1d', 'P1d', 'PT30M', 'P1W', 'PT1H ', '', 'P1D,PT1H', 'PT60M', '1 day'];
    for (const value of bad) {
      const body = problem(await fetchSeries(id, q(...LOCAL_DAYS, value)), 400);
      t.same(Object.keys(body.errors), ['aggregate'], `${JSON.stringify(value)}`);
      t.match(body.errors.aggregate[0], /PT15M, PT1H, P1D, P7D/);
    }
    const twice = problem(await fetchSeries(id, `${q(...LOCAL_DAYS, 'P1D')}&aggregate=P1D`), 400);
    t.same(Object.keys(twice.errors), ['aggregate']);
    t.match(twice.errors.aggregate[0], /more than once/);
    const both = problem(await fetchSeries(id, q('x', LOCAL_DAYS[1], 'daily')), 400);
    t.same(Object.keys(both.errors), ['from', 'aggregate']);
    const tooLong = problem(
      await fetchSeries(id, q('2024-01-01T00:00:00Z', '2025-01-02T00:00:00Z', 'P1D')),
      400,
    );
    t.same(Object.keys(tooLong.errors), ['to'], 'the 366-day limit holds');
  });

  t.test('order of checks and HEAD are those of a raw series', async (t) => {
    const query = q(...LOCAL_DAYS, 'P1D');
    problem(await get(api.base, path(tube!.identifier, query)), 401);
    problem(await fetchSeries(tube!.identifier, q(...LOCAL_DAYS, 'x'), as(nothing.key)), 400);
    problem(await fetchSeries(tube!.identifier, query, as(nothing.key)), 403);
    problem(await fetchSeries(hidden!.identifier, query), 404);

    const getResponse = await fetchSeries(tube!.identifier, query);
    const head = await send(api.base, 'HEAD', path(tube!.identifier, query), as(reader.key));
    t.equal(head.status, 200);
    t.equal(head.body, '');
    const { date: _d, 'x-request-id': _g, 'transfer-encoding': _t, ...getHeaders } = getResponse.headers;
    const { date: _e, 'x-request-id': _h, 'transfer-encoding': _u, ...headHeaders } = head.headers;
    t.same(headHeaders, getHeaders, 'the headers of GET');
    t.equal((await send(api.base, 'HEAD', path(hidden!.identifier, query), as(reader.key))).status, 404);
    t.equal(
      (await send(api.base, 'HEAD', path(tube!.identifier, q(...LOCAL_DAYS, 'P2D')), as(reader.key))).status,
      400,
    );
  });
});

/** The measurements endpoint over real HTTP: parameters, boundaries, precision, access. */
import t from 'tap';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, type HttpResponse, send } from '../../helpers/http.js';

const path = (id: string, query = '') => `/v1/groundwater-monitoring-tubes/${id}/measurements${query}`;
const q = (from: string, to: string) => `?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
const DAY = q('2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z');

t.test('measurements', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  const [tube, other] = await addWell(sql, 'Well', [
    { number: '1' },
    { number: '2', unit: 'cm', verticalDatum: 'TAW' },
  ]);
  const [hidden] = await addWell(sql, 'Hidden', [{ number: '1' }]);
  await addMeasurements(sql, tube!.id, [
    ['2023-12-31T23:59:59.999999Z', '1'],
    ['2024-01-01T00:00:00Z', '-1.23'],
    ['2024-01-01T00:00:00.000001Z', '0.1'],
    ['2024-01-01T00:00:00.5Z', '12.3456789012345'],
    ['2024-01-01T06:30:00.123456Z', '-0.001'],
    ['2024-01-01T12:00:00.12Z', '100'],
    ['2024-01-01T23:59:59.999999Z', '1e-7'],
    ['2024-01-02T00:00:00Z', '2'],
  ]);
  await addMeasurements(sql, hidden!.id, [['2024-01-01T00:00:00Z', '5']]);
  const reader = await addKey(sql, { tubeIds: [tube!.id, other!.id] });
  const nothing = await addKey(sql);
  const as = (key: string) => ({ 'x-api-key': key });
  const fetchSeries = (id: string, query: string, key = reader.key) =>
    get(api.base, path(id, query), as(key));

  const problem = (response: HttpResponse, status: number) => {
    t.equal(response.status, status, `status ${status}`);
    t.equal(response.headers['content-type'], 'application/problem+json');
    t.equal(response.headers['api-version'], '1.4.0');
    return JSON.parse(response.body);
  };

  t.test('a day: inclusive from, exclusive to, microseconds and decimals as stored', async (t) => {
    const response = await fetchSeries(tube!.identifier, DAY);
    t.equal(response.status, 200);
    t.equal(response.headers['content-type'], 'application/json');
    t.equal(response.headers['api-version'], '1.4.0');
    t.ok(response.body.startsWith('{"tubeIdentifier":'), 'the series head comes first');
    const series = JSON.parse(response.body);
    t.same(series, {
      tubeIdentifier: tube!.identifier,
      from: '2024-01-01T00:00:00Z',
      to: '2024-01-02T00:00:00Z',
      unit: 'm',
      verticalDatum: 'NAP',
      measurements: [
        { observedAt: '2024-01-01T00:00:00Z', value: -1.23 },
        { observedAt: '2024-01-01T00:00:00.000001Z', value: 0.1 },
        { observedAt: '2024-01-01T00:00:00.5Z', value: 12.3456789012345 },
        { observedAt: '2024-01-01T06:30:00.123456Z', value: -0.001 },
        { observedAt: '2024-01-01T12:00:00.12Z', value: 100 },
        { observedAt: '2024-01-01T23:59:59.999999Z', value: 1e-7 },
      ],
    });
    // The decimals are written as the shortest text that reads back as the stored value.
    for (const text of ['-1.23', '0.1', '12.3456789012345', '-0.001', '100', '1e-7']) {
      t.ok(response.body.includes(`"value":${text}}`), `value written as ${text}`);
    }
  });

  t.test('offsets are normalised to UTC; lower-case t and z are accepted', async (t) => {
    const response = await fetchSeries(
      tube!.identifier,
      q('2024-01-01T01:00:00.000001+01:00', '2023-12-31T19:00:00.5-05:00'),
    );
    t.equal(response.status, 200);
    const series = JSON.parse(response.body);
    t.equal(series.from, '2024-01-01T00:00:00.000001Z');
    t.equal(series.to, '2024-01-01T00:00:00.5Z');
    t.same(series.measurements, [{ observedAt: '2024-01-01T00:00:00.000001Z', value: 0.1 }]);
    const lower = JSON.parse(
      (await fetchSeries(tube!.identifier, q('2024-01-01t00:00:00z', '2024-01-01t00:00:01z'))).body,
    );
    t.equal(lower.from, '2024-01-01T00:00:00Z');
    t.equal(lower.measurements.length, 3);
  });

  t.test('an interval without measurements is an empty series', async (t) => {
    const response = await fetchSeries(other!.identifier, DAY);
    t.equal(response.status, 200);
    t.same(JSON.parse(response.body), {
      tubeIdentifier: other!.identifier,
      from: '2024-01-01T00:00:00Z',
      to: '2024-01-02T00:00:00Z',
      unit: 'cm',
      verticalDatum: 'TAW',
      measurements: [],
    });
  });

  t.test('identifiers match case-insensitively; the response has the lower-case form', async (t) => {
    const response = await fetchSeries(tube!.identifier.toUpperCase(), DAY);
    t.equal(response.status, 200);
    t.equal(JSON.parse(response.body).tubeIdentifier, tube!.identifier);
  });

  t.test('366 days exactly is allowed; one microsecond more is 400 on `to`', async (t) => {
    const ok = await fetchSeries(tube!.identifier, q('2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z'));
    t.equal(ok.status, 200, '2024 is a leap year: 366 days');
    t.equal(JSON.parse(ok.body).measurements.length, 7);
    const viaOffset = await fetchSeries(
      tube!.identifier,
      q('2024-01-01T02:00:00+02:00', '2025-01-01T00:00:00Z'),
    );
    t.equal(viaOffset.status, 200, 'the same 366 days written with an offset');
    const over = problem(
      await fetchSeries(tube!.identifier, q('2024-01-01T00:00:00Z', '2025-01-01T00:00:00.000001Z')),
      400,
    );
    t.same(Object.keys(over.errors), ['to']);
    t.match(over.errors.to[0], /366 days/);
  });

  t.test('each 400 names the parameter to change', async (t) => {
    const id = tube!.identifier;
    const cases: [string, string, Record<string, RegExp>][] = [
      ['missing from', '?to=2024-01-02T00:00:00Z', { from: /required/ }],
      ['missing to', '?from=2024-01-01T00:00:00Z', { to: /required/ }],
      ['both missing', '', { from: /required/, to: /required/ }],
      ['empty from', '?from=&to=2024-01-02T00:00:00Z', { from: /RFC 3339/ }],
      ['date only', q('2024-01-01', '2024-01-02T00:00:00Z'), { from: /RFC 3339/ }],
      ['no offset', q('2024-01-01T00:00:00', '2024-01-02T00:00:00Z'), { from: /RFC 3339/ }],
      ['impossible date', q('2023-02-29T00:00:00Z', '2023-03-01T00:00:00Z'), { from: /does not exist/ }],
      ['hour 24', q('2024-01-01T24:00:00Z', '2024-01-03T00:00:00Z'), { from: /hour/ }],
      ['month 13', q('2024-01-01T00:00:00Z', '2024-13-01T00:00:00Z'), { to: /month/ }],
      [
        '7 fraction digits',
        q('2024-01-01T00:00:00.1234567Z', '2024-01-02T00:00:00Z'),
        { from: /6 fractional/ },
      ],
      ['from given twice', `${DAY}&from=2024-01-01T00:00:00Z`, { from: /more than once/ }],
      ['to given twice', `${DAY}&to=2024-01-02T00:00:00Z`, { to: /more than once/ }],
      ['+ sent as a space', '?from=2024-01-01T00:00:00+01:00&to=2024-01-02T00:00:00Z', { from: /%2B/ }],
      ['to equal to from', q('2024-01-01T00:00:00Z', '2024-01-01T01:00:00+01:00'), { to: /later than from/ }],
      ['to before from', q('2024-01-02T00:00:00Z', '2024-01-01T00:00:00Z'), { to: /later than from/ }],
      ['both malformed', q('x', 'y'), { from: /RFC 3339/, to: /RFC 3339/ }],
      [
        'bad percent-encoding',
        '?from=2024-01-01T00%3A00%3A00%E0%A4Z&to=2024-01-02T00:00:00Z',
        { from: /RFC 3339/ },
      ],
    ];
    for (const [name, query, expected] of cases) {
      const body = problem(await fetchSeries(id, query), 400);
      t.equal(body.title, 'Bad Request', name);
      t.equal(body.instance, path(id), `${name}: instance is the path`);
      t.same(Object.keys(body.errors).sort(), Object.keys(expected).sort(), `${name}: keys of errors`);
      for (const [parameter, pattern] of Object.entries(expected)) {
        t.ok(Array.isArray(body.errors[parameter]) && body.errors[parameter].length > 0);
        t.match(body.errors[parameter][0], pattern, `${name}: ${parameter}`);
      }
    }
  });

  t.test('unknown query parameters are ignored', async (t) => {
    const response = await fetchSeries(tube!.identifier, `${DAY}&limit=1&page=2`);
    t.equal(response.status, 200);
    t.equal(JSON.parse(response.body).measurements.length, 6);
  });

  t.test('unknown, malformed and hidden tubes give the same 404', async (t) => {
    // Identifiers of equal length, so even Content-Length cannot tell the cases apart.
    const identifiers = {
      unknown: '00000000-0000-4000-8000-000000000000',
      hidden: hidden!.identifier,
      malformed: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
    };
    const seen = [];
    for (const identifier of Object.values(identifiers)) {
      const response = await fetchSeries(identifier, DAY);
      const { instance, ...body } = problem(response, 404);
      t.equal(instance, path(identifier));
      const { date: _date, 'x-request-id': _id, ...headers } = response.headers;
      seen.push({ body, headers });
    }
    t.same(seen[1], seen[0], 'hidden is like unknown');
    t.same(seen[2], seen[0], 'malformed is like unknown');
  });

  t.test('order of checks: 401, then 400, then 403, then 404', async (t) => {
    problem(await get(api.base, path(hidden!.identifier, '?from=x')), 401);
    problem(await fetchSeries('nonsense', '?from=x'), 400);
    problem(await fetchSeries(tube!.identifier, '?from=x', nothing.key), 400);
    const forbidden = problem(
      await fetchSeries('00000000-0000-4000-8000-000000000000', DAY, nothing.key),
      403,
    );
    t.equal(forbidden.title, 'Forbidden');
    problem(await fetchSeries(tube!.identifier, DAY, nothing.key), 403);
  });

  t.test('HEAD: the status and headers of GET, no body, no measurements read', async (t) => {
    const head = await send(api.base, 'HEAD', path(tube!.identifier, DAY), as(reader.key));
    t.equal(head.status, 200);
    t.equal(head.headers['content-type'], 'application/json');
    t.equal(head.headers['api-version'], '1.4.0');
    t.equal(head.body, '');
    const missing = await send(api.base, 'HEAD', path(hidden!.identifier, DAY), as(reader.key));
    t.equal(missing.status, 404);
    t.equal(missing.headers['content-type'], 'application/problem+json');
    const bad = await send(api.base, 'HEAD', path(tube!.identifier, '?from=x'), as(reader.key));
    t.equal(bad.status, 400);
  });
});

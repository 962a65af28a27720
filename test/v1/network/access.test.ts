/**
 * The network endpoint over real HTTP, before any measurement: its parameters (400), the order of
 * checks, 403, the 404 that names a listed identifier, and which tubes a response holds in which order.
 */
import t from 'tap';
import { connect } from '../../../src/db/connect.js';
import type { Client } from '../../../src/keys/clients.js';
import { MAX_LISTED_TUBES, tubesInView } from '../../../src/v1/tubesInView.js';
import { addKey, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, type HttpResponse, send } from '../../helpers/http.js';

const PATH = '/v1/groundwater-monitoring-measurements';
const DAY = 'from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

t.test('network measurements: parameters, access and order', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  // Names and numbers whose natural order differs from their text order.
  const [w10a] = await addWell(sql, 'Well 10', [{ number: '1' }]);
  const [w2n10, w2n2] = await addWell(sql, 'Well 2', [{ number: '10' }, { number: '2' }]);
  const [hidden] = await addWell(sql, 'Hidden', [{ number: '1' }]);
  const readable = [w10a!, w2n10!, w2n2!];
  const reader = await addKey(sql, { tubeIds: readable.map((tube) => tube.id) });
  const everything = await addKey(sql, { allTubes: true });
  const nothing = await addKey(sql);
  const ask = (query: string, key = reader.key, method = 'GET') =>
    send(api.base, method, `${PATH}?${query}`, { 'x-api-key': key });

  const problem = (response: HttpResponse, status: number) => {
    t.equal(response.status, status, `status ${status}`);
    t.equal(response.headers['content-type'], 'application/problem+json');
    return JSON.parse(response.body);
  };

  t.test('each 400 names the parameter to change', async (t) => {
    const many = Array.from({ length: MAX_LISTED_TUBES + 1 }, (_, i) => `t${i}`).join(',');
    const cases: [string, string, Record<string, RegExp>][] = [
      ['an empty list', `${DAY}&tubes=`, { tubes: /empty item/ }],
      ['an empty item', `${DAY}&tubes=${w10a!.identifier},,${UNKNOWN}`, { tubes: /empty item/ }],
      ['a trailing comma', `${DAY}&tubes=${w10a!.identifier},`, { tubes: /empty item/ }],
      [
        'a duplicate in another case',
        `${DAY}&tubes=${w10a!.identifier},${w10a!.identifier.toUpperCase()}`,
        { tubes: /more than once/ },
      ],
      [
        `${MAX_LISTED_TUBES + 1} items`,
        `${DAY}&tubes=${many}`,
        { tubes: new RegExp(`at most ${MAX_LISTED_TUBES}`) },
      ],
      ['tubes given twice', `${DAY}&tubes=${UNKNOWN}&tubes=${UNKNOWN}`, { tubes: /more than once/ }],
      [
        'changedSince given twice',
        `${DAY}&changedSince=a&changedSince=b`,
        { changedSince: /more than once/ },
      ],
      [
        'a bad interval and bad tubes',
        `from=x&to=y&tubes=`,
        { from: /RFC 3339/, to: /RFC 3339/, tubes: /empty/ },
      ],
      [
        'an interval over 366 days',
        'from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00.000001Z',
        { to: /366 days/ },
      ],
      ['a bad format', `${DAY}&format=xml`, { format: /json/ }],
      ['a bad aggregate', `${DAY}&aggregate=P1M`, { aggregate: /PT15M/ }],
    ];
    for (const [name, query, expected] of cases) {
      for (const method of ['GET', 'HEAD']) {
        const response = await ask(query, reader.key, method);
        t.equal(response.status, 400, `${name} (${method})`);
        if (method === 'HEAD') continue;
        const body = problem(response, 400);
        t.equal(body.instance, PATH, `${name}: instance is the path`);
        t.same(Object.keys(body.errors).sort(), Object.keys(expected).sort(), `${name}: keys of errors`);
        for (const [parameter, pattern] of Object.entries(expected)) {
          t.match(body.errors[parameter][0], pattern, `${name}: ${parameter}`);
        }
      }
    }
    const exactly = Array.from({ length: MAX_LISTED_TUBES }, (_, i) => `t${i}`).join(',');
    t.equal(
      (await ask(`${DAY}&tubes=${exactly}`)).status,
      404,
      `${MAX_LISTED_TUBES} items pass the parameters`,
    );
  });

  t.test('a token not issued to this key is a 400 on changedSince, before access', async (t) => {
    for (const key of [reader.key, nothing.key]) {
      const body = problem(await ask(`${DAY}&changedSince=made-up`, key), 400);
      t.same(Object.keys(body.errors), ['changedSince']);
    }
  });

  t.test('order of checks: 401, 400, 403, 404', async (t) => {
    problem(await get(api.base, `${PATH}?from=x`), 401);
    problem(await ask('from=x', nothing.key), 400);
    const forbidden = problem(await ask(`${DAY}&tubes=${UNKNOWN}`, nothing.key), 403);
    t.equal(forbidden.title, 'Forbidden');
    problem(await ask(DAY, nothing.key), 403);
    t.equal((await ask(DAY, nothing.key, 'HEAD')).status, 403);
    problem(await ask(`${DAY}&tubes=${UNKNOWN}`), 404);
  });

  t.test('unknown, hidden and malformed listed tubes: one 404 naming the identifier as sent', async (t) => {
    // Identifiers of equal length: nothing but the named identifier may tell the cases apart.
    const sent = {
      unknown: UNKNOWN,
      hidden: hidden!.identifier,
      malformed: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
      upperCase: 'ABCDEF00-0000-4000-8000-000000000000',
    };
    const seen = [];
    for (const identifier of Object.values(sent)) {
      for (const method of ['GET', 'HEAD']) {
        const response = await ask(`${DAY}&tubes=${w2n2!.identifier},${identifier}`, reader.key, method);
        t.equal(response.status, 404, `${identifier} (${method})`);
        if (method === 'HEAD') continue;
        const body = problem(response, 404);
        t.ok(body.detail.includes(`"${identifier}"`), 'the detail names the identifier as sent');
        const { date: _date, 'x-request-id': _id, ...headers } = response.headers;
        seen.push({ body: { ...body, detail: body.detail.replace(identifier, '…') }, headers });
      }
    }
    for (const other of seen.slice(1)) t.same(other, seen[0], 'the same answer otherwise');
    const first = problem(await ask(`${DAY}&tubes=${UNKNOWN},${hidden!.identifier}`), 404);
    t.ok(first.detail.includes(UNKNOWN), 'the first identifier the key may not read is named');
    const everyTube = await ask(`${DAY}&tubes=${hidden!.identifier}`, everything.key, 'HEAD');
    t.equal(everyTube.status, 200, 'a key of every tube reads the tube hidden from the other');
  });

  t.test('tubes come in discovery order, whatever order they are listed in', async (t) => {
    const discovery = JSON.parse(
      (await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': reader.key })).body,
    ) as { tubes: { identifier: string }[] }[];
    const discovered = discovery.flatMap((well) => well.tubes.map((tube) => tube.identifier));
    t.same(discovered, [w2n2!.identifier, w2n10!.identifier, w10a!.identifier], 'natural order');
    const appSql = connect(api.db.url, { max: 1 });
    t.teardown(() => appSql.end({ timeout: 1 }));
    const client: Client = {
      keyId: 'test',
      allTubes: false,
      grants: new Set(readable.map((tube) => tube.id)),
    };
    const identifiers = async (listed?: string[]) =>
      (await tubesInView(appSql, client, listed)).map((tube) => tube.identifier);
    t.same(await identifiers(), discovered, 'every readable tube');
    t.same(
      await identifiers([w10a!.identifier, w2n2!.identifier]),
      [w2n2!.identifier, w10a!.identifier],
      'listed ones',
    );
    t.same(await identifiers([hidden!.identifier]), [], 'never a hidden one');
  });
});

/** Log lines: one JSON line per request with the fields an operator needs, and never an API key. */
import t from 'tap';
import { generateApiKey } from '../../../src/keys/format.js';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, sendRaw } from '../../helpers/http.js';

t.test('request log and key redaction', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Well', [{ number: '1' }]);
  await addMeasurements(sql, tube!.id, [
    ['2024-01-01T00:00:00Z', '1'],
    ['2024-01-01T00:01:00Z', '2'],
  ]);
  const { key, keyId } = await addKey(sql, { tubeIds: [tube!.id] });
  const stranger = generateApiKey();
  const series = `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements`;
  const day = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';

  const ok = await get(api.base, `${series}${day}`, { 'x-api-key': key });
  t.equal(ok.status, 200);
  await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': key });
  await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': stranger });
  // Keys where they do not belong: in the query string, in the path, in a header with a bad encoding.
  await get(api.base, `/v1/groundwater-monitoring-wells?api_key=${key}`, { 'x-api-key': key });
  await get(api.base, `/v1/${key}`);
  await get(api.base, `/v1/${key}/%zz`);
  // Any value of api_key, on any path: a mistyped key, one not shaped like a key, in any spelling.
  const mistyped = 'gwMistypedKeyValue12';
  await get(api.base, `/v1/ogc/collections?api_key=${mistyped}`);
  await get(api.base, `/v1/groundwater-monitoring-wells?limit=1&API_KEY=${mistyped}&bbox=1`);
  await get(api.base, `/nowhere?api%5Fkey=${mistyped}%22x&format=json`);
  await get(api.base, `/v1/ogc?api_key=${mistyped}`);
  await sendRaw(api.port, `GET /v1/x HTTP/1.1\r\nX-API-Key: ${key}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  await sql`alter table tubes rename to tubes_elsewhere`;
  const failed = await get(api.base, `${series}${day}`, { 'x-api-key': stranger });
  const failedWithKey = await get(api.base, `${series}${day}`, { 'x-api-key': key });
  await sql`alter table tubes_elsewhere rename to tubes`;
  t.equal(failed.status, 401, 'the stranger never gets as far as the database error');
  t.equal(failedWithKey.status, 500);

  const lines = api.logLines;
  const records = lines.map((line) => JSON.parse(line));

  t.test('no line holds a key, in any form', async (t) => {
    t.ok(lines.length > 8);
    for (const secret of [key, stranger]) {
      t.notOk(
        lines.some((line) => line.includes(secret)),
        'the key itself',
      );
      t.notOk(
        lines.some((line) => line.includes(secret.slice(3, 30))),
        'nor a large part of it',
      );
    }
    t.ok(
      lines.some((line) => line.includes('gw_[redacted]')),
      'keys in URLs are replaced, not dropped',
    );
    t.notOk(
      lines.some((line) => line.includes('MistypedKey')),
      'no value of api_key, whatever it holds',
    );
    t.equal(
      lines.filter((line) => /api(_|%5F)key=\[redacted\]/i.test(line)).length,
      5,
      'each replaced, the gw_ key above too',
    );
    t.ok(
      lines.some((line) => line.includes('&bbox=1')) && lines.some((line) => line.includes('&format=json')),
      'the parameters after it are kept',
    );
  });

  t.test('one line per request with id, route, status, duration, key id and rows', async (t) => {
    const requests = records.filter((r) => r.msg === 'request');
    t.ok(requests.length >= 8);
    for (const r of requests) {
      t.match(r.reqId, /^[0-9a-f-]{36}$/);
      t.type(r.status, 'number');
      t.type(r.durationMs, 'number');
      t.ok('route' in r && 'keyId' in r);
    }
    const streamed = requests.find((r) => r.reqId === ok.headers['x-request-id']);
    t.match(streamed, {
      method: 'GET',
      route: '/v1/groundwater-monitoring-tubes/:tubeIdentifier/measurements',
      status: 200,
      keyId,
      rows: 2,
      complete: true,
    });
    // The fields, in this order: pino's own, the request id (the request logger's binding), ours.
    t.same(Object.keys(streamed), [
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'method',
      'url',
      'route',
      'status',
      'durationMs',
      'keyId',
      'rows',
      'complete',
      'msg',
    ]);
    const denied = requests.find((r) => r.status === 401);
    t.equal(denied.keyId, null);
  });

  t.test('a 500 is logged in full under its request id', async (t) => {
    const requestId = failedWithKey.headers['x-request-id'];
    const error = records.find((r) => r.level === 50 && r.reqId === requestId);
    t.ok(error, 'error line with the request id');
    t.match(error.err.message, /tubes/, 'with what the database said');
    t.match(error.err.stack, /engine\/read\/tubes/, "the stack names the query's origin");
  });
});

/** X-API-Key over real HTTP: 401 cases, the key cache and revocation, and the limits seam (429). */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { loadSettings } from '../../src/config.js';
import { generateApiKey } from '../../src/keys/format.js';
import { addKey, addWell, revokeKey } from '../../testkit/fixtures.js';
import { openStream } from '../../testkit/openStream.js';
import { startApi } from '../helpers/api.js';
import { get, type HttpResponse } from '../helpers/http.js';
import { scriptedLimits } from '../helpers/scriptedLimits.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const DAY = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';

function unauthorized(t: Test, response: HttpResponse) {
  t.equal(response.status, 401);
  t.equal(response.headers['content-type'], 'application/problem+json');
  t.equal(response.headers['www-authenticate'], 'ApiKey header="X-API-Key"');
  t.equal(JSON.parse(response.body).title, 'Unauthorized');
}

t.test('keys', async (t) => {
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '1' } });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Well', [{ number: '1' }]);
  const live = await addKey(sql, { tubeIds: [tube!.id] });
  const revoked = await addKey(sql, { tubeIds: [tube!.id] });
  await revokeKey(sql, revoked.keyId);
  const series = `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements${DAY}`;

  t.test('missing, empty, malformed, unknown and revoked keys are 401 on both endpoints', async (t) => {
    for (const path of [WELLS, series]) {
      unauthorized(t, await get(api.base, path));
      unauthorized(t, await get(api.base, path, { 'x-api-key': '' }));
      unauthorized(t, await get(api.base, path, { 'x-api-key': 'secret' }));
      unauthorized(t, await get(api.base, path, { 'x-api-key': `${live.key}x` }));
      unauthorized(t, await get(api.base, path, { 'x-api-key': generateApiKey() }));
      unauthorized(t, await get(api.base, path, { 'x-api-key': revoked.key }));
      t.equal((await get(api.base, path, { 'x-api-key': live.key })).status, 200);
    }
  });

  t.test('a known key is looked up once per cache period; an unknown one too', async (t) => {
    const other = await addKey(sql, { allTubes: true });
    const unknown = generateApiKey();
    let statements = 0;
    api.appSql.options.debug = () => {
      statements++;
    };
    t.teardown(() => {
      api.appSql.options.debug = undefined as never;
    });
    await get(api.base, WELLS, { 'x-api-key': other.key });
    t.equal(statements, 2, 'key lookup and wells');
    await get(api.base, WELLS, { 'x-api-key': other.key });
    t.equal(statements, 3, 'wells only: the key came from the cache');
    await get(api.base, WELLS, { 'x-api-key': unknown });
    await get(api.base, WELLS, { 'x-api-key': unknown });
    t.equal(statements, 4, 'one lookup for two requests with the same unknown key');
  });

  t.test('a revoked key stops working within KEY_CACHE_SECONDS, on every replica', async (t) => {
    const key = await addKey(sql, { tubeIds: [tube!.id] });
    const replica = await startApi(t, { db: api.db, env: { KEY_CACHE_SECONDS: '1' } });
    for (const base of [api.base, replica.base]) {
      t.equal((await get(base, WELLS, { 'x-api-key': key.key })).status, 200, 'cached as valid');
    }
    await revokeKey(sql, key.keyId);
    const revokedAt = performance.now();
    for (const base of [api.base, replica.base]) {
      while ((await get(base, WELLS, { 'x-api-key': key.key })).status === 200) await sleep(50);
      const seconds = (performance.now() - revokedAt) / 1000;
      t.ok(seconds < 1.5, `401 ${seconds.toFixed(2)} s after the revocation (cache: 1 s)`);
    }
  });

  t.test('KEY_CACHE_SECONDS is at most 10: revocation within 10 seconds holds for any setting', async (t) => {
    t.throws(() => loadSettings({ KEY_CACHE_SECONDS: '11' }), /KEY_CACHE_SECONDS/);
  });
});

t.test('the limits seam: order of checks, 429, and slots released', async (t) => {
  const limits = scriptedLimits();
  const api = await startApi(t, { limits, poolMax: 2 });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Well', [{ number: '1' }]);
  await sql`
    insert into measurements (tube_id, observed_at, value)
    select ${tube!.id}, t, 1.5 from generate_series('2024-01-01'::timestamptz, '2024-03-01', '1 minute') t`;
  const key = await addKey(sql, { tubeIds: [tube!.id] });
  const nothing = await addKey(sql);
  const path = (query: string) => `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements${query}`;
  const as = (k: string) => ({ 'x-api-key': k });

  t.test('a valid key is admitted once per request, whatever the outcome', async (t) => {
    limits.admitted.length = 0;
    t.equal((await get(api.base, WELLS, as(key.key))).status, 200);
    t.equal((await get(api.base, path('?from=x'), as(key.key))).status, 400);
    t.equal((await get(api.base, path(DAY), as(nothing.key))).status, 403);
    t.equal((await get(api.base, path(DAY).replace(tube!.identifier, 'nope'), as(key.key))).status, 404);
    t.same(limits.admitted, [key.keyId, key.keyId, nothing.keyId, key.keyId]);
    t.equal(limits.held, 0, 'every slot released');
  });

  t.test('429 comes after 401 and before 400, with Retry-After', async (t) => {
    limits.refuseNext('concurrency', 1);
    const refused = await get(api.base, path('?from=x'), as(key.key));
    t.equal(refused.status, 429);
    t.equal(refused.headers['retry-after'], '1');
    t.equal(refused.headers['content-type'], 'application/problem+json');
    t.equal(refused.headers['api-version'], '1.4.0');
    t.equal(JSON.parse(refused.body).title, 'Too Many Requests');
    limits.refuseNext('rate', 2.2);
    t.equal(
      (await get(api.base, WELLS, as(key.key))).headers['retry-after'],
      '3',
      'whole seconds, rounded up',
    );
    t.equal((await get(api.base, WELLS)).status, 401, 'no key: not admitted, 401');
  });

  t.test('failed authentication is limited per address', async (t) => {
    limits.failedAuth.length = 0;
    await get(api.base, WELLS, as('wrong'));
    t.same(limits.failedAuth, ['127.0.0.1']);
    limits.refuseFailedAuth(30);
    const refused = await get(api.base, WELLS, as('wrong'));
    t.equal(refused.status, 429);
    t.equal(refused.headers['retry-after'], '30');
    limits.refuseFailedAuth(null);
    t.equal((await get(api.base, WELLS, as(key.key))).status, 200, 'a valid key is not affected');
  });

  t.test('a streamed response holds its slot until it ends, or until the client leaves', async (t) => {
    const long = path('?from=2024-01-01T00:00:00Z&to=2024-03-01T00:00:00Z');
    const reading = openStream(api.base, long, key.key);
    await reading.firstChunk;
    reading.pause();
    t.equal(limits.held, 1, 'held while streaming');
    reading.resume();
    t.ok((await reading.done).complete);
    t.equal(limits.held, 0, 'released when the body is complete');
    const leaving = openStream(api.base, long, key.key);
    await leaving.firstChunk;
    leaving.pause();
    t.equal(limits.held, 1);
    leaving.abort();
    while (limits.held > 0) await sleep(10);
    t.pass('released when the client left');
  });
});

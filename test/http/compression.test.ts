/**
 * Compressed responses over real HTTP: gzip and br when asked for (Accept-Encoding), plain otherwise,
 * `Vary: Accept-Encoding` on both; the series compressed as it streams (a paused client holds back the
 * cursor, a client that leaves gives the connection back, a database error cuts the response off), and
 * the discovery body cached per set of grants yet exact after a registry or grant change.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { negotiateCoding } from '../../src/http/compression.js';
import { VERSION_FRESH_MS } from '../../src/v1/wells/discoveryCache.js';
import { addKey, addWell, addYearTube } from '../../testkit/fixtures.js';
import { openStream } from '../../testkit/openStream.js';
import { startApi, type TestApi } from '../helpers/api.js';
import { get } from '../helpers/http.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const DECOMPRESS = { gzip: gunzipSync, br: brotliDecompressSync } as const;

t.test('Accept-Encoding is negotiated as RFC 9110 says', async (t) => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'], // equal weights: br, smaller and cheaper
    ['GZIP;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['deflate, compress', undefined],
    // A q outside RFC 9110's grammar weighs 0, as it does in Accept (test/v1/series/csv.test.ts).
    ['gzip;q=bogus, br;q=0.1', 'br'],
    ['gzip;q=2, br;q=0.1', 'br'],
    ['gzip;q=0.5000, br;q=0.1', 'br'],
    ['gzip;q=-1', undefined],
    ['gzip ; Q = 0.5 , br ; q=0.25', 'gzip'],
  ];
  for (const [header, expected] of cases) t.equal(negotiateCoding(header), expected, `${header}`);
  // The answers are remembered per value: asked again, the same (and long values are not kept).
  for (const [header, expected] of cases) t.equal(negotiateCoding(header), expected, `${header}, again`);
  const long = `${'x-custom;q=0.1, '.repeat(20)}gzip`;
  t.equal(negotiateCoding(long), 'gzip', 'a long value');
  t.equal(negotiateCoding(long), 'gzip', 'a long value, again');
  t.equal(negotiateCoding(['gzip;q=0.2', 'br;q=0.1']), 'gzip', 'a header given twice');
});

/** States of the app's own database connections. */
async function inTransaction(api: TestApi): Promise<boolean> {
  const rows = await api.db.sql<{ state: string }[]>`
    select state from pg_stat_activity where application_name = ${api.applicationName}`;
  return rows.some((row) => row.state === 'idle in transaction' || row.state === 'active');
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 3000) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

t.test('the series, compressed as it streams', async (t) => {
  // One connection: one not given back would make every later request hang.
  const api = await startApi(t, { poolMax: 1 });
  const { sql } = api.db;
  const { key, seriesPath: series } = await addYearTube(sql);
  const month = `${series}?from=2024-03-01T00:00:00Z&to=2024-04-01T00:00:00Z`;
  const year = `${series}?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z`;

  t.test('plain by default, gzip or br when asked; the same document either way', async (t) => {
    const plain = await get(api.base, month, { 'x-api-key': key });
    t.equal(plain.status, 200);
    t.equal(plain.headers['content-encoding'], undefined, 'no coding unless asked for');
    t.equal(plain.headers.vary, 'Accept, Accept-Encoding');
    t.equal(JSON.parse(plain.body).measurements.length, 31 * 1440);
    for (const coding of ['gzip', 'br'] as const) {
      const response = await get(api.base, month, { 'x-api-key': key, 'accept-encoding': coding });
      t.equal(response.status, 200);
      t.equal(response.headers['content-encoding'], coding);
      t.equal(response.headers.vary, 'Accept, Accept-Encoding');
      t.equal(response.headers['transfer-encoding'], 'chunked', 'streamed, no length known up front');
      t.equal(response.headers['content-length'], undefined);
      const body = DECOMPRESS[coding](response.bytes!);
      t.ok(body.equals(plain.bytes!), `${coding}: decompressed, byte for byte the plain body`);
      t.ok(response.bytes!.length * 5 < plain.bytes!.length, `${coding}: ${response.bytes!.length} bytes`);
    }
  });

  t.test('HEAD announces the coding GET would use', async (t) => {
    const head = await api.app.inject({
      method: 'HEAD',
      url: month,
      headers: { 'x-api-key': key, 'accept-encoding': 'gzip' },
    });
    t.equal(head.statusCode, 200);
    t.equal(head.headers['content-encoding'], 'gzip');
    t.equal(head.headers.vary, 'Accept, Accept-Encoding');
    t.equal(head.body, '');
  });

  // Smooth levels compress ~10×: a compressed year (~3 MB) fits in a loopback socket's send buffer
  // (tcp_wmem autotunes up to 4 MB), so a paused client could not hold anything back. Random
  // 11-decimal values at random microseconds compress ~2×, far beyond any socket buffer.
  const [noisyTube] = await addWell(sql, 'Noisy', [{ number: '1' }]);
  await sql`
    insert into measurements (tube_id, observed_at, value)
    select ${noisyTube!.id}, timestamptz '2024-01-01' + n * interval '1 minute'
             + (random() * 59999999)::int * interval '1 microsecond',
           round((random() * 2000 - 1000)::numeric, 11)
    from generate_series(0, 366 * 1440 - 1) n`;
  await sql`vacuum analyze measurements`;
  const { key: noisyKey } = await addKey(sql, { tubeIds: [noisyTube!.id] });
  const noisyYear = `/v1/groundwater-monitoring-tubes/${noisyTube!.identifier}/measurements?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z`;

  t.test('a paused client holds back the cursor: the body is never compressed whole', async (t) => {
    const stream = openStream(api.base, noisyYear, noisyKey, { 'accept-encoding': 'gzip' });
    await stream.firstChunk;
    stream.pause();
    // A year takes well under a second at full speed; compressing it whole would end the snapshot.
    await sleep(1500);
    t.ok(await inTransaction(api), 'the snapshot is still open: the cursor waits for the client');
    stream.resume();
    const { complete, bytes } = await stream.done;
    t.ok(complete);
    t.ok(bytes.length > 8_000_000, `compressed, ${bytes.length} bytes: more than socket buffers hold`);
    t.equal(JSON.parse(gunzipSync(bytes).toString()).measurements.length, 366 * 1440, 'then it completes');
  });

  t.test('a client that leaves a compressed stream gives the connection back at once', async (t) => {
    const stream = openStream(api.base, year, key, { 'accept-encoding': 'br' });
    await stream.firstChunk;
    stream.pause();
    t.ok(await inTransaction(api), 'streaming from an open transaction');
    stream.abort();
    await waitFor(async () => !(await inTransaction(api)), 'the transaction ended');
    // The pool has one connection: this answers only if it was given back.
    const next = await get(api.base, WELLS, { 'x-api-key': key });
    t.equal(next.status, 200);
  });

  t.test('a database error mid-stream cuts the compressed response off', async (t) => {
    const stream = openStream(api.base, year, key, { 'accept-encoding': 'gzip' });
    await stream.firstChunk;
    stream.pause();
    const [backend] = await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where application_name = ${api.applicationName}`;
    await sql`select pg_terminate_backend(${backend!.pid})`;
    stream.resume();
    const { complete, bytes } = await stream.done;
    t.notOk(complete, 'the client sees an incomplete response');
    t.throws(() => gunzipSync(bytes), 'the gzip stream is truncated too');
    t.ok(
      api.logLines.some((line) => line.includes('response cut off')),
      'the failure is logged',
    );
    const recovered = await get(api.base, month, { 'x-api-key': key, 'accept-encoding': 'gzip' });
    t.equal(recovered.status, 200, 'the pool recovers');
  });
});

t.test('discovery: cached per set of grants, compressed once, exact after changes', async (t) => {
  // Keys are trusted for one second: a grant change must show within that time.
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '1' } });
  const { sql } = api.db;
  const tubes = [];
  for (let i = 1; i <= 30; i++)
    tubes.push(...(await addWell(sql, `Well ${i}`, [{ number: '1' }, { number: '2' }])));
  const all = await addKey(sql, { allTubes: true });
  const some = await addKey(sql, { tubeIds: [tubes[0]!.id] });
  const names = (body: string) => JSON.parse(body).map((well: { name: string }) => well.name);

  const plain = await get(api.base, WELLS, { 'x-api-key': all.key });
  t.equal(plain.headers.vary, 'Accept, Accept-Encoding');
  t.equal(names(plain.body).length, 30);
  for (const coding of ['gzip', 'br'] as const) {
    for (let repeat = 0; repeat < 2; repeat++) {
      const response = await get(api.base, WELLS, { 'x-api-key': all.key, 'accept-encoding': coding });
      t.equal(response.headers['content-encoding'], coding);
      t.equal(response.headers.vary, 'Accept, Accept-Encoding');
      t.ok(DECOMPRESS[coding](response.bytes!).equals(plain.bytes!), `${coding}, request ${repeat + 1}`);
    }
  }
  const small = await get(api.base, WELLS, { 'x-api-key': some.key, 'accept-encoding': 'gzip' });
  t.equal(small.headers['content-encoding'], undefined, 'a body under 1 KB is sent as it is');
  t.same(names(small.body), ['Well 1'], 'another set of grants, another body');

  // An import of the registry: visible to every request that starts VERSION_FRESH_MS after it, cached
  // body or not.
  const afterChange = () => sleep(VERSION_FRESH_MS + 50);
  await addWell(sql, 'Well 31', [{ number: '1' }]);
  await afterChange();
  t.equal(names((await get(api.base, WELLS, { 'x-api-key': all.key })).body).length, 31);
  await sql`update wells set name = 'Renamed' where name = 'Well 1'`;
  await afterChange();
  t.ok(names((await get(api.base, WELLS, { 'x-api-key': all.key })).body).includes('Renamed'));
  t.same(names((await get(api.base, WELLS, { 'x-api-key': some.key })).body), ['Renamed']);
  await sql`delete from tubes where well_id = (select id from wells where name = 'Well 31')`;
  await afterChange();
  t.equal(names((await get(api.base, WELLS, { 'x-api-key': all.key })).body).length, 30);

  // A grant change: visible once the key cache has let the key go (KEY_CACHE_SECONDS).
  await sql`insert into api_key_grants (key_id, tube_id) values (${some.keyId}, ${tubes[2]!.id})`;
  await sleep(1100);
  t.same(names((await get(api.base, WELLS, { 'x-api-key': some.key })).body), ['Renamed', 'Well 2']);
});

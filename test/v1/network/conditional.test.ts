/**
 * Conditional requests and HEAD of the network endpoint over real HTTP, rows imported by the real
 * importer: a weak tag that covers every tube of the response and the parameters, 304 and HEAD without
 * reading a measurement, and a 304 never hiding a 400, 403 or 404.
 */
import t from 'tap';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { createKey } from '../../../src/keys/store.js';
import { rememberKey } from '../../../testkit/outputCapture.js';
import { startApi } from '../../helpers/api.js';
import { januaryRows, validatorsOf } from '../../helpers/conditional.js';
import { type HttpResponse, send } from '../../helpers/http.js';
import { OTHER, rowImporter, THIRD, TUBE, threeTubes } from '../../helpers/importFixtures.js';

const PATH = '/v1/groundwater-monitoring-measurements';
const JANUARY = 'from=2024-01-01T00:00:00Z&to=2024-02-01T00:00:00Z';
const WEAK_TAG = /^W\/"[A-Za-z0-9_-]+"$/;

t.test('conditional requests of the network endpoint', async (t) => {
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  await upsertRegistry(sql, threeTubes('m'));
  const reader = await createKey(sql, { name: 'reader', tubeIdentifiers: [TUBE, OTHER], allTubes: false });
  rememberKey(reader.key);
  const importRows = rowImporter(sql);
  await importRows([...januaryRows(TUBE), ...januaryRows(OTHER)]);

  const ask = (query: string, headers: Record<string, string> = {}, method = 'GET') =>
    send(api.base, method, `${PATH}?${query}`, { 'x-api-key': reader.key, ...headers });
  const head = (query: string, headers: Record<string, string> = {}) => ask(query, headers, 'HEAD');
  const tagOf = (response: HttpResponse) => String(response.headers.etag);

  const first = await head(JANUARY);
  const etag = tagOf(first);

  t.test('HEAD: the headers of a 200, no body', async (t) => {
    // A weak tag: every response has a sync token of its own.
    const { vary } = validatorsOf(t, first, WEAK_TAG);
    t.equal(first.body, '');
    t.equal(vary, 'Accept, Accept-Encoding');
    t.equal(first.headers['content-type'], 'application/json');
    t.ok(first.headers['sync-token'], 'Sync-Token');
    t.match(String(first.headers['sync-token']), /^[A-Za-z0-9_-]{1,200}$/, 'URL-safe, at most 200');
    const csv = await head(`${JANUARY}&format=csv`);
    t.match(csv.headers['content-type'], /^text\/csv/);
    t.equal(
      csv.headers['content-disposition'],
      'attachment; filename="groundwater-measurements_20240101T000000Z_20240201T000000Z.csv"',
    );
  });

  t.test('304 by tag (weak comparison, a list, *) and by date, for GET and HEAD', async (t) => {
    const notModified = (response: HttpResponse, what: string) => {
      t.equal(response.status, 304, what);
      t.equal(response.body, '', `${what}: no body`);
      t.equal(response.headers.etag, etag, `${what}: the same tag`);
      t.equal(response.headers.vary, 'Accept, Accept-Encoding', `${what}: Vary`);
      t.notOk(response.headers['content-type'], `${what}: no Content-Type`);
    };
    notModified(await ask(JANUARY, { 'if-none-match': etag }), 'the tag');
    notModified(await head(JANUARY, { 'if-none-match': etag }), 'HEAD');
    notModified(await ask(JANUARY, { 'if-none-match': etag.slice(2) }), 'the tag without W/');
    notModified(await ask(JANUARY, { 'if-none-match': `"old", ${etag}` }), 'a list');
    notModified(await ask(JANUARY, { 'if-none-match': '*' }), '*');
    notModified(
      await ask(JANUARY, { 'if-modified-since': String(first.headers['last-modified']) }),
      'the date',
    );
    const other = await head(JANUARY, { 'if-none-match': '"old"' });
    t.equal(other.status, 200, 'another tag');
  });

  t.test('a 304 and a HEAD read no measurement', async (t) => {
    await sql`alter table measurements rename to measurements_out_of_reach`;
    try {
      t.equal((await ask(JANUARY, { 'if-none-match': etag })).status, 304);
      t.equal((await head(JANUARY)).status, 200);
      t.equal((await ask(JANUARY, { 'if-none-match': '"old"' })).status, 500, 'the control: a GET reads');
    } finally {
      await sql`alter table measurements_out_of_reach rename to measurements`;
    }
  });

  t.test('the tag tells apart what the body depends on', async (t) => {
    const tags = new Map<string, string>([['json', etag]]);
    const variants: [string, string, Record<string, string>][] = [
      ['csv', `${JANUARY}&format=csv`, {}],
      ['csv by Accept', JANUARY, { accept: 'text/csv' }],
      ['gzip', JANUARY, { 'accept-encoding': 'gzip' }],
      ['br', JANUARY, { 'accept-encoding': 'br' }],
      ['aggregated', `${JANUARY}&aggregate=P1D`, {}],
      ['another interval', 'from=2024-01-01T00:00:00Z&to=2024-03-01T00:00:00Z', {}],
      ['one tube', `${JANUARY}&tubes=${TUBE}`, {}],
    ];
    for (const [what, query, headers] of variants) tags.set(what, tagOf(await head(query, headers)));
    t.equal(tags.get('csv'), tags.get('csv by Accept'), 'the format, however chosen');
    tags.delete('csv by Accept');
    t.equal(new Set(tags.values()).size, tags.size, `${tags.size} different tags`);
    t.equal(
      tagOf(await head(`${JANUARY}&tubes=${OTHER},${TUBE}`)),
      etag,
      'both tubes listed: as all of them',
    );
    t.equal(
      tagOf(await head(`${JANUARY}&tubes=${TUBE.toUpperCase()},${OTHER}`)),
      etag,
      'in another order and case',
    );
  });

  t.test('what changes the tag, and what does not', async (t) => {
    const justTube = `${JANUARY}&tubes=${TUBE}`;
    const tubeTag = tagOf(await head(justTube));
    await importRows(januaryRows(TUBE));
    t.equal(tagOf(await head(JANUARY)), etag, 'an import that changes nothing');
    await importRows([[OTHER, '2024-01-02T05:00:00Z', '9.5']]);
    const afterOther = tagOf(await head(JANUARY));
    t.not(afterOther, etag, "a change of one tube's values changes the tag of all");
    t.equal(tagOf(await head(justTube)), tubeTag, 'and not of a selection without that tube');
    await upsertRegistry(sql, threeTubes('cm'));
    t.not(tagOf(await head(justTube)), tubeTag, "a tube's unit");
    const beforeGrant = tagOf(await head(JANUARY));
    await sql`
      insert into api_key_grants (key_id, tube_id)
      select ${reader.keyId}, id from tubes where identifier = ${THIRD}`;
    t.not(tagOf(await head(JANUARY)), beforeGrant, "a grant: the key's view");
    await sql`update wells set name = 'A' where name = 'X'`;
    const reordered = await head(JANUARY);
    t.not(tagOf(reordered), beforeGrant, 'a well renamed before the others: another order');
  });

  t.test('a 304 never hides a 400, 403 or 404', async (t) => {
    const nothing = await createKey(sql, { name: 'nothing', tubeIdentifiers: [], allTubes: false });
    rememberKey(nothing.key);
    const any = { 'if-none-match': '*' };
    t.equal((await ask(`${JANUARY}&tubes=`, any)).status, 400);
    t.equal((await ask(`${JANUARY}&changedSince=x`, any)).status, 400);
    t.equal((await ask(`${JANUARY}&tubes=00000000-0000-4000-8000-000000000000`, any)).status, 404);
    const forbidden = await send(api.base, 'GET', `${PATH}?${JANUARY}`, { 'x-api-key': nothing.key, ...any });
    t.equal(forbidden.status, 403);
  });
});

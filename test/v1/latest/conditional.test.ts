/**
 * Latest over real HTTP with rows imported by the real importer (which keeps latest_measurements in
 * its transaction): its refusals in the order of the contract, HEAD and 304 without reading a row, a
 * strong tag that moves with what the body derives from (an import, a status, a unit, a well's name
 * or location, a grant) and only with it, and one token of the key's limits per request.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { loadSettings } from '../../../src/config.js';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { createKey } from '../../../src/keys/store.js';
import { createClientLimits } from '../../../src/limits/createClientLimits.js';
import { MAX_LISTED_TUBES } from '../../../src/v1/tubesInView.js';
import { rememberKey } from '../../../testkit/outputCapture.js';
import { startApi } from '../../helpers/api.js';
import { validatorsOf } from '../../helpers/conditional.js';
import { type HttpResponse, send } from '../../helpers/http.js';
import { OTHER, THIRD, TUBE, threeTubes } from '../../helpers/importFixtures.js';
import { expectedLatest, LATEST } from '../../helpers/latest.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

t.test('latest: refusals, HEAD, 304 and its tag', async (t) => {
  // Limits in process, as one replica without Redis keeps them: each request takes one token.
  const limits = await createClientLimits(loadSettings({ RATE_LIMIT_BURST: '1000' }), {
    logger: { info() {}, warn() {} },
  });
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '0' }, limits });
  const { sql } = api.db;
  await upsertRegistry(sql, threeTubes('m'));
  const reader = await createKey(sql, { name: 'reader', tubeIdentifiers: [TUBE, OTHER], allTubes: false });
  const nothing = await createKey(sql, { name: 'nothing', tubeIdentifiers: [], allTubes: false });
  rememberKey(reader.key);
  rememberKey(nothing.key);
  let imports = 0;
  const importCsv = (lines: string[]) =>
    importMeasurements(
      sql,
      Readable.from([Buffer.from(`tubeIdentifier,observedAt,value,status\n${lines.join('\n')}\n`)]),
      { name: `import ${++imports}` },
    );
  await importCsv([
    `${TUBE},2024-01-01T00:00:00Z,1.5,approved`,
    `${TUBE},2024-01-02T00:00:00Z,1.25,provisional`,
    `${OTHER},2024-01-01T12:00:00Z,-3,rejected`,
    `${THIRD},2024-01-03T00:00:00Z,7,approved`,
  ]);

  const ask = (query: string, headers: Record<string, string> = {}, method = 'GET', key = reader.key) =>
    send(api.base, method, `${LATEST}${query ? `?${query}` : ''}`, { 'x-api-key': key, ...headers });
  const head = (query: string, headers: Record<string, string> = {}) => ask(query, headers, 'HEAD');
  const tagOf = (response: HttpResponse) => String(response.headers.etag);
  const problem = (response: HttpResponse, status: number) => {
    t.equal(response.status, status, `status ${status}`);
    t.equal(response.headers['content-type'], 'application/problem+json');
    return JSON.parse(response.body);
  };

  t.test('what the importer kept is what the measurements say', async (t) => {
    const response = await ask('include=status');
    t.same(JSON.parse(response.body), await expectedLatest(sql, [TUBE, OTHER]));
    const approved = await ask('status=approved&include=status');
    t.same(JSON.parse(approved.body), await expectedLatest(sql, [TUBE, OTHER], ['approved']));
  });

  t.test('each 400 names the parameter; 401, 400, 403, 404 in that order', async (t) => {
    const many = Array.from({ length: MAX_LISTED_TUBES + 1 }, (_, i) => `t${i}`).join(',');
    const cases: [string, string, Record<string, RegExp>][] = [
      ['an empty list', 'tubes=', { tubes: /empty item/ }],
      ['a duplicate', `tubes=${TUBE},${TUBE.toUpperCase()}`, { tubes: /more than once/ }],
      ['too many', `tubes=${many}`, { tubes: new RegExp(`at most ${MAX_LISTED_TUBES}`) }],
      ['tubes twice', `tubes=${TUBE}&tubes=${OTHER}`, { tubes: /more than once/ }],
      ['an unknown status', 'status=approve', { status: /approve/ }],
      ['an empty status', 'status=', { status: /empty item/ }],
      ['a duplicate status', 'status=approved,approved', { status: /more than once/ }],
      ['status twice', 'status=approved&status=rejected', { status: /more than once/ }],
      ['an unknown include', 'include=unit', { include: /status/ }],
      ['include twice', 'include=status&include=status', { include: /more than once/ }],
      ['a bad box', 'bbox=5,52,4,53', { bbox: /./ }],
      ['bbox twice', 'bbox=0,0,1,1&bbox=0,0,1,1', { bbox: /more than once/ }],
      ['a bad format', 'format=xml', { format: /json, csv, arrow or geojson/ }],
      ['format twice', 'format=json&format=csv', { format: /more than once/ }],
      ['several at once', 'format=xml&status=x&tubes=', { format: /geojson/, status: /x/, tubes: /empty/ }],
    ];
    for (const [name, query, expected] of cases) {
      t.equal((await head(query)).status, 400, `${name} (HEAD)`);
      const body = problem(await ask(query), 400);
      t.equal(body.instance, LATEST, `${name}: instance`);
      t.same(Object.keys(body.errors).sort(), Object.keys(expected).sort(), `${name}: errors`);
      for (const [parameter, pattern] of Object.entries(expected)) {
        t.match(body.errors[parameter][0], pattern, `${name}: ${parameter}`);
      }
    }
    t.equal((await ask('from=x&to=y&aggregate=nonsense')).status, 200, 'from, to, aggregate: ignored');
    problem(await send(api.base, 'GET', `${LATEST}?status=x`), 401);
    problem(await ask('status=x', {}, 'GET', nothing.key), 400);
    problem(await ask(`tubes=${UNKNOWN}`, {}, 'GET', nothing.key), 403);
    problem(await ask('', {}, 'GET', nothing.key), 403);
    const notFound = problem(await ask(`tubes=${OTHER},${THIRD.toUpperCase()}`), 404);
    t.ok(notFound.detail.includes(`"${THIRD.toUpperCase()}"`), 'the 404 names the hidden tube as sent');
    const unknown = problem(await ask(`tubes=${UNKNOWN}`), 404);
    t.same(
      { ...unknown, detail: unknown.detail.replace(UNKNOWN, '…') },
      { ...notFound, detail: notFound.detail.replace(THIRD.toUpperCase(), '…') },
      'unknown and hidden: the same answer',
    );
  });

  const first = await head('');
  const etag = tagOf(first);

  t.test('HEAD: the headers of a 200, no body', async (t) => {
    const { vary } = validatorsOf(t, first);
    t.equal(first.body, '');
    t.equal(vary, 'Accept, Accept-Encoding');
    t.equal(first.headers['content-type'], 'application/json');
    t.notOk(first.headers['sync-token'], 'no sync token: latest is no sync');
    const get = await ask('');
    t.equal(tagOf(get), etag, 'the GET has the tag of the HEAD');
    t.equal(
      get.headers['content-length'] ?? get.headers['transfer-encoding'],
      get.headers['content-length'] ?? 'chunked',
    );
  });

  t.test('one token of the limits per request', async (t) => {
    const remaining = (response: HttpResponse) =>
      Number(/;r=(\d+)/.exec(String(response.headers.ratelimit))![1]);
    const before = remaining(await ask(''));
    t.equal(remaining(await ask('format=arrow')), before - 1);
    t.equal(remaining(await head('format=geojson')), before - 2);
  });

  t.test('304 by tag and by date, for GET and HEAD, reading no row', async (t) => {
    await sql`alter table latest_measurements rename to latest_out_of_reach`;
    try {
      for (const method of ['GET', 'HEAD']) {
        const byTag = await ask('', { 'if-none-match': etag }, method);
        t.equal(byTag.status, 304, `${method} by tag`);
        t.equal(byTag.body, '');
        t.equal(byTag.headers.etag, etag);
        const byDate = await ask('', { 'if-modified-since': String(first.headers['last-modified']) }, method);
        t.equal(byDate.status, 304, `${method} by date`);
      }
      t.equal((await head('')).status, 200, 'a HEAD reads no row');
      t.equal((await ask('', { 'if-none-match': '"old"' })).status, 500, 'the control: a GET reads them');
    } finally {
      await sql`alter table latest_out_of_reach rename to latest_measurements`;
    }
  });

  t.test('the tag tells apart what the body depends on', async (t) => {
    const tags = new Map<string, string>([['json', etag]]);
    const variants: [string, string, Record<string, string>][] = [
      ['csv', 'format=csv', {}],
      ['arrow', 'format=arrow', {}],
      ['geojson', 'format=geojson', {}],
      ['geojson by Accept', '', { accept: 'application/geo+json' }],
      ['gzip', '', { 'accept-encoding': 'gzip' }],
      ['approved', 'status=approved', {}],
      ['approved or rejected', 'status=approved,rejected', {}],
      ['with status', 'include=status', {}],
      ['one tube', `tubes=${TUBE}`, {}],
    ];
    for (const [what, query, headers] of variants) tags.set(what, tagOf(await head(query, headers)));
    t.equal(tags.get('geojson'), tags.get('geojson by Accept'), 'the format, however chosen');
    tags.delete('geojson by Accept');
    t.equal(new Set(tags.values()).size, tags.size, `${tags.size} different tags`);
    t.equal(tagOf(await head('status=rejected,approved,provisional')), etag, 'every status: no filter');
    t.equal(tagOf(await head(`tubes=${OTHER},${TUBE.toUpperCase()}`)), etag, 'both listed, any order');
    t.equal(tagOf(await head('from=2024-01-01T00:00:00Z')), etag, 'a parameter latest ignores');
  });

  t.test('what changes the tag, and what does not', async (t) => {
    const geo = tagOf(await head('format=geojson'));
    const justOther = tagOf(await head(`tubes=${OTHER}`));
    await importCsv([`${TUBE},2024-01-02T00:00:00Z,1.25,provisional`]);
    t.equal(tagOf(await head('')), etag, 'an import that changes nothing');
    await importCsv([`${TUBE},2024-01-02T00:00:00Z,1.25,approved`]);
    const approved = await ask('status=approved&include=status');
    t.same(
      JSON.parse(approved.body),
      await expectedLatest(sql, [TUBE, OTHER], ['approved']),
      'a status change',
    );
    const afterStatus = tagOf(await head(''));
    t.not(afterStatus, etag, 'a status change changes the tag');
    t.equal(tagOf(await head(`tubes=${OTHER}`)), justOther, 'and not of a selection without that tube');
    await upsertRegistry(sql, threeTubes('cm'));
    t.not(tagOf(await head('')), afterStatus, "a tube's unit");
    const beforeMove = tagOf(await head('format=geojson'));
    t.not(beforeMove, geo);
    await sql`update wells set longitude = 5.5, latitude = 52.25 where name = 'W'`;
    const moved = await ask('format=geojson');
    t.not(tagOf(moved), beforeMove, "a well's location: the GeoJSON's geometry");
    t.same(JSON.parse(moved.body).features[0].geometry, { type: 'Point', coordinates: [5.5, 52.25] });
    const beforeRename = tagOf(await head('format=geojson'));
    await sql`update wells set name = 'W 1' where name = 'W'`;
    t.not(tagOf(await head('format=geojson')), beforeRename, "a well's name: the GeoJSON's wellName");
    const beforeGrant = tagOf(await head(''));
    await sql`
      insert into api_key_grants (key_id, tube_id)
      select ${reader.keyId}, id from tubes where identifier = ${THIRD}`;
    const granted = await ask('');
    t.not(tagOf(granted), beforeGrant, "a grant: the key's view");
    t.same(
      JSON.parse(granted.body).map((row: { tubeIdentifier: string }) => row.tubeIdentifier),
      [TUBE, OTHER, THIRD],
    );
  });

  t.test('a 304 never hides a 400, 403 or 404', async (t) => {
    const any = { 'if-none-match': '*' };
    t.equal((await ask('tubes=', any)).status, 400);
    t.equal((await ask('status=x', any)).status, 400);
    t.equal((await ask(`tubes=${UNKNOWN}`, any)).status, 404);
    t.equal((await ask('', any, 'GET', nothing.key)).status, 403);
  });
});

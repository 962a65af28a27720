/**
 * `/v1/ogc` over real HTTP on plain PostgreSQL: the landing page and conformance (public), the three
 * collections with their extents, items with every parameter's rule, paging by `next` links, single
 * features, and of a tube the key may not read nothing at all: not in a list, a count, an extent, a page
 * or an item.
 */
import t from 'tap';
import { createClientLimits } from '../../../src/limits/createClientLimits.js';
import { addMeasurements } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, send } from '../../helpers/http.js';
import { refreshLatest } from '../../helpers/latest.js';
import { recordingLogger, settingsWith } from '../../helpers/limits.js';
import { READABLE, seedLocatedWells, TUBES } from '../../helpers/locatedWells.js';

const OGC = '/v1/ogc';
const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';

interface Collection {
  type: string;
  features: { id: string; geometry: unknown; properties: Record<string, unknown> }[];
  numberMatched: number;
  numberReturned: number;
  links: { rel: string; href: string; type: string }[];
}

t.test('/v1/ogc', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const { keys, tubeIds } = await seedLocatedWells(sql);
  const id = (identifier: string) => tubeIds.get(identifier)!;
  // Three days of a measurement every 6 hours on Amstel 1's first tube, two on Maas, one on the hidden ones.
  const amstel = ['2024-01-01', '2024-01-02', '2024-01-03'].flatMap((day) =>
    ['00', '06', '12', '18'].map((hour): [string, string] => [`${day}T${hour}:00:00Z`, `1.${hour}`]),
  );
  await addMeasurements(sql, id(TUBES.amstel1a), amstel);
  await addMeasurements(sql, id(TUBES.maas), [
    ['2023-12-31T23:00:00.5Z', '2.5'],
    ['2024-01-02T00:00:00Z', '2.75'],
  ]);
  await addMeasurements(sql, id(TUBES.hidden), [['2025-06-01T00:00:00Z', '9']]);
  await addMeasurements(sql, id(TUBES.mixedHidden), [['2019-06-01T00:00:00Z', '9']]);
  await sql`update measurements set status = 0 where tube_id = ${id(TUBES.amstel1a)} and observed_at < '2024-01-02T00:00:00Z'`;
  await refreshLatest(sql);
  await sql`select rollup_tube_measurements(id) from tubes`;
  const reader = { 'X-API-Key': keys.reader.key };
  const read = async (path: string, headers: Record<string, string> = reader) => {
    const response = await get(api.base, path, headers);
    return { ...response, json: JSON.parse(response.body) };
  };

  t.test('the landing page and the conformance are public', async (t) => {
    for (const path of [OGC, `${OGC}/`]) {
      const { status, headers, json } = await read(path, {});
      t.equal(status, 200, path);
      t.match(headers['content-type'], /^application\/json/);
      const rels = Object.fromEntries(json.links.map((link: { rel: string }) => [link.rel, link]));
      t.equal(rels['service-desc'].type, 'application/vnd.oai.openapi+json;version=3.0');
      t.equal(rels['service-desc'].href, `${api.base}/v1/ogc/api`, 'the OpenAPI document in 3.0');
      t.equal(rels.conformance.href, `${api.base}${OGC}/conformance`);
      t.equal(rels.data.href, `${api.base}${OGC}/collections`);
    }
    const { status, json } = await read(`${OGC}/conformance`, {});
    t.equal(status, 200);
    t.same(
      [...json.conformsTo].sort(),
      ['core', 'geojson', 'oas30'].map((c) => `http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/${c}`),
    );
  });

  t.test('collections need a key, and show its own features', async (t) => {
    const none = await read(`${OGC}/collections`, {});
    t.equal(none.status, 401);
    t.match(none.json.detail, /X-API-Key header, or as api_key in the URL/, 'the 401 names both places');
    t.equal((await read(`${OGC}/collections`, { 'X-API-Key': keys.none.key })).status, 403);
    const { status, json } = await read(`${OGC}/collections`);
    t.equal(status, 200);
    t.same(
      json.collections.map((c: { id: string }) => c.id),
      ['tubes', 'latest', 'measurements'],
    );
    const byId = Object.fromEntries(json.collections.map((c: { id: string }) => [c.id, c]));
    for (const collection of json.collections) {
      t.equal(collection.itemType, 'feature');
      t.same(collection.crs, [CRS84]);
      t.ok(collection.title && collection.description);
      const items = collection.links.find((link: { rel: string }) => link.rel === 'items');
      t.equal(items.href, `${api.base}${OGC}/collections/${collection.id}/items`);
    }
    // The reader's located tubes: Amstel 1, Amstel 10, Maas 3, Mixed (not Hidden at 4.6,52.2 — inside anyway).
    t.same(byId.tubes.extent.spatial.bbox, [[4.5, 50.85, 5.7, 52.37]]);
    t.notOk(byId.tubes.extent.temporal, 'tubes have no time');
    // Only Amstel 1 and Maas have measurements the reader may read: the hidden 2019 and 2025 ones are not there.
    t.same(byId.measurements.extent.spatial.bbox, [[4.9, 50.85, 5.7, 52.37]]);
    t.same(byId.measurements.extent.temporal.interval, [['2023-12-31T23:00:00.5Z', '2024-01-03T18:00:00Z']]);
    t.same(byId.latest.extent.temporal.interval, [['2024-01-02T00:00:00Z', '2024-01-03T18:00:00Z']]);
    const one = await read(`${OGC}/collections/latest`);
    t.same(one.json.extent, byId.latest.extent);
    t.equal((await read(`${OGC}/collections/wells`)).status, 404);
    // The key that reads everything sees the hidden ones' times.
    const all = await read(`${OGC}/collections/measurements`, { 'X-API-Key': keys.all.key });
    t.same(all.json.extent.temporal.interval, [['2019-06-01T00:00:00Z', '2025-06-01T00:00:00Z']]);
  });

  t.test('tubes: every readable tube in discovery order, flat properties, nulls where unknown', async (t) => {
    const { status, headers, json } = await read(`${OGC}/collections/tubes/items`);
    t.equal(status, 200);
    t.match(headers['content-type'], /^application\/geo\+json/);
    const page = json as Collection;
    t.equal(page.type, 'FeatureCollection');
    t.same(
      page.features.map((f) => f.id),
      [TUBES.amstel1a, TUBES.amstel1b, TUBES.amstel10, TUBES.maas, TUBES.mixedReadable, TUBES.nowhere],
    );
    t.same(new Set(page.features.map((f) => f.id)), new Set(READABLE));
    t.equal(page.numberMatched, 6);
    t.equal(page.numberReturned, 6);
    t.same(page.features[0], {
      type: 'Feature',
      id: TUBES.amstel1a,
      geometry: { type: 'Point', coordinates: [4.9, 52.37] },
      properties: {
        tubeIdentifier: TUBES.amstel1a,
        wellName: 'Amstel 1',
        tubeNumber: '1',
        unit: 'm',
        verticalDatum: 'NAP',
        groundLevel: -0.42,
        tubeTop: 0.31,
        screenTop: -7.5,
        screenBottom: -8.5,
      },
    });
    t.equal(page.features[5]!.geometry, null, 'Nowhere has no location');
    t.equal(page.features[1]!.properties.screenTop, null);
    t.notOk(
      page.links.some((link) => link.rel === 'next'),
      'one page',
    );
    const boxed = await read(`${OGC}/collections/tubes/items?bbox=4,52,5,52.5&skipGeometry=true`);
    t.same(
      boxed.json.features.map((f: { id: string }) => f.id),
      [TUBES.amstel1a, TUBES.amstel1b, TUBES.amstel10, TUBES.mixedReadable],
    );
    t.ok(boxed.json.features.every((f: { geometry: unknown }) => f.geometry === null));
    t.notMatch(boxed.body, /coordinates/);
    t.equal(boxed.json.numberMatched, 4);
  });

  t.test('paging: next links keep every filter, limit may change, every feature once', async (t) => {
    let path = `${OGC}/collections/tubes/items?limit=2&bbox=4,50,6,53`;
    const seen: string[] = [];
    while (path) {
      const { json } = await read(path);
      t.equal(json.numberMatched, 5);
      seen.push(...json.features.map((f: { id: string }) => f.id));
      const next = json.links.find((link: { rel: string }) => link.rel === 'next');
      if (!next) break;
      const url = new URL(next.href);
      t.equal(url.origin, api.base, 'absolute');
      t.equal(url.searchParams.get('bbox'), '4,50,6,53');
      t.equal(url.searchParams.get('limit'), '2');
      path = `${url.pathname}${url.search}`;
    }
    t.same(seen, [TUBES.amstel1a, TUBES.amstel1b, TUBES.amstel10, TUBES.maas, TUBES.mixedReadable]);
    // limit changes between pages: the cursor still holds.
    const first = await read(`${OGC}/collections/measurements/items?limit=5`);
    const next = new URL(first.json.links.find((link: { rel: string }) => link.rel === 'next').href);
    next.searchParams.set('limit', '100');
    const rest = await read(`${next.pathname}${next.search}`);
    t.equal(rest.status, 200);
    t.equal(first.json.numberReturned + rest.json.numberReturned, 14);
    t.notOk(rest.json.links.some((link: { rel: string }) => link.rel === 'next'));
  });

  t.test('cursors of another key, another filter, another collection or altered are 400', async (t) => {
    const first = await read(`${OGC}/collections/measurements/items?limit=3&status=approved,provisional`);
    const next = new URL(first.json.links.find((link: { rel: string }) => link.rel === 'next').href);
    const cursor = next.searchParams.get('cursor')!;
    const refused = async (path: string, headers = reader) => {
      const response = await read(path, headers);
      t.equal(response.status, 400, path);
      t.match(response.headers['content-type'], /^application\/problem\+json/);
      t.ok(response.json.errors.cursor, 'names the cursor');
    };
    t.equal((await read(`${next.pathname}${next.search}`)).status, 200, 'as given');
    await refused(`${next.pathname}${next.search}`, { 'X-API-Key': keys.all.key });
    await refused(`${OGC}/collections/measurements/items?limit=3&status=approved&cursor=${cursor}`);
    await refused(`${OGC}/collections/latest/items?limit=3&status=approved,provisional&cursor=${cursor}`);
    const [payload, mac] = cursor.split('.');
    const altered = Buffer.from(
      JSON.stringify([...JSON.parse(Buffer.from(payload!, 'base64url').toString()).slice(0, 3), 0, 0]),
    ).toString('base64url');
    await refused(
      `${OGC}/collections/measurements/items?limit=3&status=approved,provisional&cursor=${altered}.${mac}`,
    );
    await refused(`${OGC}/collections/measurements/items?cursor=nonsense`);
  });

  t.test(
    'measurements: by tube, then time; numberMatched from the rollups; datetime inclusive',
    async (t) => {
      const { json } = await read(`${OGC}/collections/measurements/items`);
      t.equal(json.numberMatched, 14);
      t.equal(json.features[0].id, `${TUBES.amstel1a}:2024-01-01T00:00:00Z`);
      t.same(json.features[0].properties, {
        tubeIdentifier: TUBES.amstel1a,
        observedAt: '2024-01-01T00:00:00Z',
        value: 1,
        status: 'approved',
        unit: 'm',
        verticalDatum: 'NAP',
      });
      t.equal(json.features[12].id, `${TUBES.maas}:2023-12-31T23:00:00.5Z`, 'Maas after Amstel');
      const cases: [string, number][] = [
        ['datetime=2024-01-02T00:00:00Z', 2],
        ['datetime=2024-01-01T06:00:00Z/2024-01-02T06:00:00Z', 6],
        ['datetime=2024-01-01T06:00:00Z/2024-01-03T00:00:00Z', 9],
        ['datetime=../2024-01-02T00:00:00Z', 7],
        ['datetime=2024-01-02T00:00:00Z/..', 9],
        ['datetime=2024-01-02T00:00:00Z/', 9],
        ['status=approved', 4],
        ['status=provisional&datetime=2024-01-01T23:00:00Z/2024-01-03T05:59:59Z', 6],
        [`tubeIdentifier=${TUBES.maas}`, 2],
        [`tubeIdentifier=${TUBES.hidden},${TUBES.mixedHidden}`, 0],
        ['bbox=4,52,5,52.5', 12],
      ];
      for (const [query, count] of cases) {
        const page = await read(`${OGC}/collections/measurements/items?${query}&limit=50000`);
        t.equal(page.status, 200, query);
        t.equal(page.json.numberReturned, count, `${query}: returned`);
        t.equal(page.json.numberMatched, count, `${query}: matched`);
      }
      const hidden = await read(`${OGC}/collections/measurements/items?limit=1000`, {
        'X-API-Key': keys.all.key,
      });
      t.equal(hidden.json.numberMatched, 16, 'the key that reads all sees the hidden ones');
    },
  );

  t.test('latest: one per tube with a measurement, filtered by status and datetime', async (t) => {
    const { json } = await read(`${OGC}/collections/latest/items`);
    t.same(
      json.features.map((f: { id: string }) => f.id),
      [TUBES.amstel1a, TUBES.maas],
    );
    t.equal(json.numberMatched, 2);
    t.same(json.features[0].properties, {
      tubeIdentifier: TUBES.amstel1a,
      wellName: 'Amstel 1',
      tubeNumber: '1',
      observedAt: '2024-01-03T18:00:00Z',
      value: 1.18,
      status: 'provisional',
      unit: 'm',
      verticalDatum: 'NAP',
    });
    const approved = await read(`${OGC}/collections/latest/items?status=approved`);
    t.equal(approved.json.features[0].properties.observedAt, '2024-01-01T18:00:00Z');
    const timed = await read(`${OGC}/collections/latest/items?datetime=2024-01-02T00:00:00Z`);
    t.same(
      timed.json.features.map((f: { id: string }) => f.id),
      [TUBES.maas],
    );
  });

  t.test('single features; one the key may not read is 404 as an unknown one', async (t) => {
    const tube = await read(`${OGC}/collections/tubes/items/${TUBES.maas}`);
    t.equal(tube.status, 200);
    t.equal(tube.json.properties.wellName, 'Maas 3');
    const measurement = await read(
      `${OGC}/collections/measurements/items/${TUBES.maas}:2023-12-31T23:00:00.5Z`,
    );
    t.equal(measurement.status, 200);
    t.equal(measurement.json.properties.value, 2.5);
    const latest = await read(`${OGC}/collections/latest/items/${TUBES.maas}`);
    t.equal(latest.json.properties.observedAt, '2024-01-02T00:00:00Z');
    const unknown = '0c000000-0000-4000-8000-000000000999';
    const answers = [];
    for (const path of [
      `tubes/items/${TUBES.hidden}`,
      `tubes/items/${unknown}`,
      `latest/items/${TUBES.hidden}`,
      `latest/items/${TUBES.amstel1b}`,
      `measurements/items/${TUBES.hidden}:2025-06-01T00:00:00Z`,
      `measurements/items/${unknown}:2025-06-01T00:00:00Z`,
      'measurements/items/nonsense',
    ]) {
      const response = await read(`${OGC}/collections/${path}`);
      t.equal(response.status, 404, path);
      answers.push(response.json.detail);
    }
    t.equal(new Set(answers).size, 1, 'one answer for hidden and unknown');
    const all = await read(`${OGC}/collections/tubes/items/${TUBES.hidden}`, { 'X-API-Key': keys.all.key });
    t.equal(all.status, 200, 'it is there for a key that may read it');
  });

  t.test('parameters by OGC rules', async (t) => {
    const items = `${OGC}/collections/measurements/items`;
    const refused: [string, string][] = [
      ['format=json', 'format'],
      ['limit=0', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['bbox=4,52,0,5,52.5,10', 'bbox'],
      ['bbox-crs=http://www.opengis.net/def/crs/EPSG/0/28992', 'bbox-crs'],
      ['crs=http://www.opengis.net/def/crs/EPSG/0/4326', 'crs'],
      ['datetime=../..', 'datetime'],
      ['datetime=2024-01-02T00:00:00Z/2024-01-01T00:00:00Z', 'datetime'],
      ['f=csv', 'f'],
      ['skipGeometry=yes', 'skipGeometry'],
    ];
    for (const [query, name] of refused) {
      const { status, json } = await read(`${items}?${query}`);
      t.equal(status, 400, query);
      t.ok(json.errors?.[name], `${query} names ${name}`);
    }
    t.equal(
      (await read(`${OGC}/collections/tubes/items?status=approved`)).status,
      400,
      'tubes have no status',
    );
    const big = await read(`${OGC}/collections/tubes/items?limit=99999`);
    t.equal(big.status, 200, 'beyond the maximum is the maximum');
    const digits = await read(
      `${OGC}/collections/tubes/items?bbox=4.0000000000000001,51.999999999999999,5.00000000000001,52.5&bbox-crs=${encodeURIComponent(CRS84)}`,
    );
    t.equal(digits.json.numberMatched, 4, 'GDAL-style digits and CRS84');
    const f = await read(`${items}?f=json`);
    t.match(f.headers['content-type'], /^application\/json/);
  });

  t.test('api_key: accepted on /v1/ogc, must agree with the header, never in a link', async (t) => {
    const viaUrl = await read(`${OGC}/collections/measurements/items?limit=2&api_key=${keys.reader.key}`, {});
    t.equal(viaUrl.status, 200);
    t.notMatch(viaUrl.body, keys.reader.key, 'no link carries the key');
    const next = new URL(viaUrl.json.links.find((link: { rel: string }) => link.rel === 'next').href);
    t.equal(next.searchParams.get('api_key'), null);
    // QGIS appends the key to the next link itself.
    next.searchParams.set('api_key', keys.reader.key);
    t.equal((await read(`${next.pathname}${next.search}`, {})).status, 200);
    t.equal((await read(`${next.pathname}${next.search}`, reader)).status, 200, 'the same key in both');
    const both = await read(`${OGC}/collections?api_key=${keys.all.key}`, reader);
    t.equal(both.status, 400);
    t.notMatch(both.body, keys.all.key);
    t.notMatch(both.body, keys.reader.key);
    const wrong = await read(`${OGC}/collections?api_key=not-a-key-at-all`, {});
    t.equal(wrong.status, 401);
    t.notMatch(wrong.body, 'not-a-key-at-all');
    for (const path of ['/v1/openapi.json', '/v1/ogc/api']) {
      const document = await read(`${path}?api_key=${keys.reader.key}`, {});
      t.equal(document.status, 200, `${path}: the OpenAPI document ignores it`);
    }
    t.equal(
      (await read(`/v1/groundwater-monitoring-wells?api_key=${keys.reader.key}`, {})).status,
      401,
      'only /v1/ogc takes it',
    );
    for (const line of api.logLines) {
      t.notMatch(line, keys.reader.key);
      t.notMatch(line, 'not-a-key-at-all');
    }
  });

  // Last: it adds a measurement.
  t.test('a page of measurements is streamed with validators: 304 until its data change', async (t) => {
    const path = `${OGC}/collections/measurements/items?tubeIdentifier=${TUBES.maas}&limit=1`;
    const first = await read(path);
    const etag = first.headers.etag as string;
    t.match(etag, /^W\/"/, 'weak: each page has a timeStamp of its own');
    t.equal(first.headers['content-type'], 'application/geo+json');
    const again = await get(api.base, path, { ...reader, 'If-None-Match': etag });
    t.equal(again.status, 304);
    const next = first.json.links.find((link: { rel: string }) => link.rel === 'next');
    const nextPage = await get(api.base, new URL(next.href).pathname + new URL(next.href).search, {
      ...reader,
      'If-None-Match': etag,
    });
    t.equal(nextPage.status, 200, 'another page has another tag');
    t.equal(JSON.parse(nextPage.body).numberReturned, 1);
    const latestOfMaas = async () =>
      (await read(`${OGC}/collections/latest/items`)).json.features.find(
        (feature: { id: string }) => feature.id === TUBES.maas,
      ).properties.observedAt;
    t.equal(await latestOfMaas(), '2024-01-02T00:00:00Z');
    // As an import does it: the rows, and the tube's series version in the same change.
    await addMeasurements(sql, id(TUBES.maas), [['2024-01-03T00:00:00Z', '2.8']]);
    await sql`update tubes set series_version = series_version + 1, series_changed_at = clock_timestamp()
              where id = ${id(TUBES.maas)}`;
    const changed = await get(api.base, path, { ...reader, 'If-None-Match': etag });
    t.equal(changed.status, 200, 'a measurement of its tube changes it');
    t.equal(JSON.parse(changed.body).numberReturned, 1);
    await refreshLatest(sql);
    t.equal(await latestOfMaas(), '2024-01-03T00:00:00Z', 'a kept latest page is of its snapshot');
  });

  // Last: it changes a tube.
  t.test('a first page of a whole view is kept until the registry changes', async (t) => {
    const path = `${OGC}/collections/tubes/items`;
    const first = await read(path);
    const again = await read(path);
    t.equal(again.body, first.body, 'kept whole, its timeStamp too');
    t.not((await read(`${path}?limit=5`)).body, first.body, 'another limit is another page');
    const other = await read(path, { 'X-API-Key': keys.all.key });
    t.not(other.json.numberMatched, first.json.numberMatched, 'another key has its own');
    await sql`update tubes set ground_level = -0.5 where id = ${id(TUBES.amstel1a)}`;
    const changed = await read(path);
    t.equal(changed.json.features[0].properties.groundLevel, -0.5, 'a change of the registry shows');
    t.not(changed.json.timeStamp, first.json.timeStamp);
  });
});

t.test('/v1/ogc: each page one request under the token bucket, read-only, public pages free', async (t) => {
  const env = { RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '0.001' };
  const limits = await createClientLimits(settingsWith(env), { logger: recordingLogger() });
  t.teardown(() => limits.close());
  const api = await startApi(t, { env, limits });
  const { keys } = await seedLocatedWells(api.db.sql);
  const items = `${OGC}/collections/tubes/items?limit=2`;
  for (let i = 0; i < 5; i++) t.equal((await get(api.base, OGC)).status, 200, 'the landing page is public');
  t.equal((await get(api.base, `${OGC}/conformance`)).status, 200);
  const first = await get(api.base, items, { 'X-API-Key': keys.reader.key });
  t.equal(first.status, 200);
  t.ok(first.headers.ratelimit, 'limits advertised');
  const next = new URL(
    JSON.parse(first.body).links.find((link: { rel: string }) => link.rel === 'next').href,
  );
  t.equal((await get(api.base, `${next.pathname}${next.search}&api_key=${keys.reader.key}`)).status, 200);
  t.equal((await get(api.base, `${OGC}/collections`, { 'X-API-Key': keys.reader.key })).status, 200);
  const refused = await get(api.base, `${next.pathname}${next.search}`, { 'X-API-Key': keys.reader.key });
  t.equal(refused.status, 429, 'the fourth request of a burst of 3, the key given either way');
  t.ok(refused.headers['retry-after']);
  t.equal((await get(api.base, items, { 'X-API-Key': keys.all.key })).status, 200, 'another key has its own');
  const post = await send(api.base, 'POST', items, { 'X-API-Key': keys.all.key });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, 'GET, HEAD');
  const head = await send(api.base, 'HEAD', items, { 'X-API-Key': keys.all.key });
  t.equal(head.status, 200);
  t.equal(head.body, '');
});

/**
 * Discovery's locations and elevations over real HTTP: the JSON fields, `bbox`, GeoJSON by `format` and
 * by Accept, their validators, and that no box, format or count tells a key about what it may not read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync } from 'node:zlib';
import t from 'tap';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { VERSION_FRESH_MS } from '../../../src/v1/wells/discoveryCache.js';
import { startApi } from '../../helpers/api.js';
import { get, send } from '../../helpers/http.js';
import { BOX, LOCATED_WELLS, seedLocatedWells, TUBES } from '../../helpers/locatedWells.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const GEOJSON = 'application/geo+json';

t.test('discovery with locations and elevations', async (t) => {
  const api = await startApi(t);
  const { keys } = await seedLocatedWells(api.db.sql);
  const as = (key: { key: string }, query = '', headers: Record<string, string> = {}) =>
    get(api.base, `${WELLS}${query}`, { 'x-api-key': key.key, ...headers });

  const amstel1 = {
    name: 'Amstel 1',
    tubes: [
      {
        identifier: TUBES.amstel1a,
        number: '1',
        unit: 'm',
        verticalDatum: 'NAP',
        groundLevel: -0.42,
        tubeTop: 0.31,
        screenTop: -7.5,
        screenBottom: -8.5,
      },
      { identifier: TUBES.amstel1b, number: '2', unit: 'm', verticalDatum: 'NAP', groundLevel: -0.42 },
    ],
    location: { type: 'Point', coordinates: [4.9, 52.37] },
  };
  const amstel10 = {
    name: 'Amstel 10',
    tubes: [{ identifier: TUBES.amstel10, number: '1', unit: 'cm', verticalDatum: 'MSL', tubeTop: 120 }],
    location: { type: 'Point', coordinates: [5, 52] },
  };
  const maas = {
    name: 'Maas 3',
    tubes: [{ identifier: TUBES.maas, number: '1', unit: 'm', verticalDatum: 'NAP' }],
    location: { type: 'Point', coordinates: [5.7, 50.85] },
  };
  const mixed = {
    name: 'Mixed',
    tubes: [{ identifier: TUBES.mixedReadable, number: '1', unit: 'm', verticalDatum: 'NAP' }],
    location: { type: 'Point', coordinates: [4.5, 52.1] },
  };
  const nowhere = {
    name: 'Nowhere',
    tubes: [{ identifier: TUBES.nowhere, number: '1', unit: 'm', verticalDatum: 'NAP' }],
  };
  /** Hidden from the reader: the hidden well, and Mixed's second tube with its screen. */
  const hiddenTraces = [
    'Hidden',
    TUBES.hidden,
    TUBES.mixedHidden,
    '"number":"2","unit":"m","verticalDatum":"NAP","screenTop"',
    '4.6',
  ];
  const showsNothingHidden = (body: string) => {
    for (const trace of hiddenTraces) t.notOk(body.includes(trace), `no trace of ${trace}`);
  };

  t.test(
    'JSON: a location when known, unit and datum always, elevations when known, never null',
    async (t) => {
      const response = await as(keys.reader);
      t.equal(response.status, 200);
      t.same(JSON.parse(response.body), [amstel1, amstel10, maas, mixed, nowhere]);
      t.notOk(response.body.includes('null'), 'unknown values are left out');
      t.same(Object.keys(JSON.parse(response.body)[0]), ['name', 'tubes', 'location']);
      showsNothingHidden(response.body);
    },
  );

  t.test('bbox: the wells inside, edges included, in discovery order; none without a location', async (t) => {
    const response = await as(keys.reader, `?bbox=${BOX}`);
    t.equal(response.status, 200);
    t.same(JSON.parse(response.body), [amstel1, amstel10, mixed]);
    showsNothingHidden(response.body);
    t.same(JSON.parse((await as(keys.reader, '?bbox=-180,-90,180,90')).body), [
      amstel1,
      amstel10,
      maas,
      mixed,
    ]);
    t.same(JSON.parse((await as(keys.reader, '?bbox=5,52,5,52')).body), [amstel10], 'a box of one point');
    t.same(JSON.parse((await as(keys.reader, '?bbox=4.9,52.37,4.9,52.37')).body), [amstel1]);
    const all = JSON.parse((await as(keys.all, `?bbox=${BOX}`)).body);
    t.same(
      all.map((well: { name: string }) => well.name),
      ['Amstel 1', 'Amstel 10', 'Hidden', 'Mixed'],
      'an all-tubes key sees the hidden well in the box',
    );
  });

  t.test('a box with no readable well is a 200 with nothing; a key that reads nothing is 403', async (t) => {
    for (const [key, query] of [
      [keys.outsider, `?bbox=${BOX}`],
      [keys.reader, '?bbox=-10,-10,-5,-5'],
    ] as const) {
      const response = await as(key, query);
      t.equal(response.status, 200);
      t.equal(response.body, '[]');
      const geojson = await as(key, `${query}&format=geojson`);
      t.equal(geojson.status, 200);
      t.equal(geojson.body, '{"type":"FeatureCollection","features":[]}');
    }
    // Only the hidden well and a hidden tube lie in this box: the same as a box with nothing in it.
    const hiddenOnly = await as(keys.reader, '?bbox=4.55,52.15,4.65,52.25');
    const empty = await as(keys.reader, '?bbox=-10,-10,-5,-5');
    t.equal(hiddenOnly.body, empty.body);
    t.equal(hiddenOnly.headers.etag, empty.headers.etag, 'nor does its tag tell them apart');
    for (const query of [`?bbox=${BOX}`, '?format=geojson', `?bbox=${BOX}&format=geojson`]) {
      t.equal((await as(keys.none, query)).status, 403, `${query}: still 403`);
    }
  });

  t.test('a malformed bbox or format is 400 naming it, before access is looked at', async (t) => {
    const bad: [string, RegExp][] = [
      ['bbox=', /holds 1 items/],
      ['bbox=1,2,3', /holds 3 items/],
      ['bbox=1,2,3,4,5,6', /holds 6 items/],
      ['bbox=1,2,3,x', /maxLat "x" is not a finite number/],
      ['bbox=1,,3,4', /minLat "" is not a finite number/],
      ['bbox=1,2,3,Infinity', /maxLat "Infinity" is not a finite number/],
      ['bbox=1,2,3,1e999', /not a finite number/],
      ['bbox=0x1,2,3,4', /not a finite number/],
      ['bbox=%201,2,3,4', /not a finite number/],
      ['bbox=1,+2,3,4', /minLat " 2" is not a finite number \(write a \+ sign as %2B\)/],
      ['bbox=1,2,3,NaN', /not a finite number/],
      ['bbox=-180.5,0,0,1', /minLon -180.5 is outside \[-180, 180\]/],
      ['bbox=0,0,1,90.01', /maxLat 90.01 is outside \[-90, 90\]/],
      ['bbox=5,0,4,1', /minLon 5 is greater than maxLon 4/],
      ['bbox=0,2,1,1', /minLat 2 is greater than maxLat 1/],
      ['bbox=1,2,3,4&bbox=1,2,3,4', /more than once/],
      ['format=xml', /must be json or geojson/],
      ['format=csv', /must be json or geojson/],
      ['format=GeoJSON', /must be json or geojson/],
      ['format=json&format=json', /more than once/],
    ];
    for (const [query, message] of bad) {
      for (const key of [keys.reader, keys.none]) {
        const response = await as(key, `?${query}`);
        t.equal(response.status, 400, query);
        const problem = JSON.parse(response.body);
        const name = query.split('=')[0]!;
        t.same(Object.keys(problem.errors), [name]);
        t.match(problem.errors[name][0], message);
      }
    }
    t.equal(
      (await as(keys.reader, '?bbox=1e0,%2B2,3.,4.5E0&unknown=1')).status,
      200,
      'decimals as written anywhere',
    );
  });

  t.test('GeoJSON: a FeatureCollection with a Feature per well, by format or by Accept', async (t) => {
    const json = JSON.parse((await as(keys.reader)).body);
    const response = await as(keys.reader, '?format=geojson');
    t.equal(response.status, 200);
    t.equal(response.headers['content-type'], GEOJSON);
    t.equal(response.headers.vary, 'Accept, Accept-Encoding');
    const collection = JSON.parse(response.body);
    t.same(collection, {
      type: 'FeatureCollection',
      features: json.map(
        ({ name, tubes, location }: { name: string; tubes: unknown; location?: unknown }) => ({
          type: 'Feature',
          geometry: location ?? null,
          properties: { name, tubes },
        }),
      ),
    });
    t.equal(collection.features[4].geometry, null, 'a well without a location: geometry null');
    showsNothingHidden(response.body);
    const byAccept: [Record<string, string>, string, string][] = [
      [{ accept: GEOJSON }, '', GEOJSON],
      [{ accept: 'application/json, application/geo+json' }, '', 'application/json'],
      [{ accept: 'application/geo+json, application/json' }, '', 'application/json'],
      [{ accept: 'application/json;q=0.5, application/geo+json' }, '', GEOJSON],
      [{ accept: 'application/*' }, '', 'application/json'],
      [{ accept: 'text/csv' }, '', 'application/json'],
      [{ accept: GEOJSON }, '?format=json', 'application/json'],
      [{ accept: 'application/json' }, '?format=geojson', GEOJSON],
    ];
    for (const [headers, query, type] of byAccept) {
      const negotiated = await as(keys.reader, query, headers);
      t.equal(negotiated.headers['content-type'], type, `${JSON.stringify(headers)} ${query}`);
      t.equal(negotiated.body, type === GEOJSON ? response.body : JSON.stringify(json));
    }
    const boxed = JSON.parse((await as(keys.reader, `?bbox=${BOX}`, { accept: GEOJSON })).body);
    t.same(
      boxed.features.map((feature: { properties: { name: string } }) => feature.properties.name),
      ['Amstel 1', 'Amstel 10', 'Mixed'],
    );
  });

  t.test('validators: a tag per body, 304 and HEAD as for the JSON', async (t) => {
    const tags = new Set<string>();
    for (const query of ['', '?format=geojson', `?bbox=${BOX}`, `?bbox=${BOX}&format=geojson`]) {
      const response = await as(keys.reader, query);
      const etag = String(response.headers.etag);
      tags.add(etag);
      t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'strong');
      const again = await as(keys.reader, query, { 'if-none-match': etag });
      t.equal(again.status, 304, `${query}: 304`);
      t.equal(again.headers.etag, etag);
      t.equal(
        (await as(keys.reader, query, { 'if-modified-since': String(response.headers['last-modified']) }))
          .status,
        304,
      );
      const head = await send(api.base, 'HEAD', `${WELLS}${query}`, { 'x-api-key': keys.reader.key });
      t.equal(head.status, 200);
      t.equal(head.body, '');
      for (const name of ['content-type', 'content-length', 'etag', 'last-modified', 'vary']) {
        t.equal(head.headers[name], response.headers[name], `${query} HEAD: ${name}`);
      }
    }
    t.equal(tags.size, 4, 'four bodies, four tags');
    const geojson = await as(keys.reader, '?format=geojson');
    const json = await as(keys.reader);
    t.equal((await as(keys.reader, '', { 'if-none-match': String(geojson.headers.etag) })).status, 200);
    t.equal(
      (await as(keys.reader, '?format=geojson', { 'if-none-match': String(json.headers.etag) })).status,
      200,
    );
  });

  t.test('large bodies are compressed, each format from its own bytes', async (t) => {
    for (const query of ['?format=geojson', `?format=geojson&bbox=-180,-90,180,90`]) {
      const plain = await as(keys.all, query);
      const br = await as(keys.all, query, { 'accept-encoding': 'br' });
      if (plain.body.length >= 1024) {
        t.equal(br.headers['content-encoding'], 'br');
        t.equal(brotliDecompressSync(br.bytes!).toString(), plain.body);
        t.not(br.headers.etag, plain.headers.etag);
      } else t.equal(br.body, plain.body);
    }
  });

  t.test('a moved well moves in and out of the box and the GeoJSON, on the next request', async (t) => {
    const before = await as(keys.reader, `?bbox=${BOX}&format=geojson`);
    await sleep(1000);
    const moved = LOCATED_WELLS.map((well) =>
      well.name === 'Maas 3'
        ? { ...well, location: { longitude: 4.1, latitude: 52.4 } }
        : well.name === 'Amstel 1'
          ? { name: well.name, tubes: well.tubes }
          : well,
    );
    await upsertRegistry(api.db.sql, moved);
    await sleep(VERSION_FRESH_MS + 50);
    const after = await as(keys.reader, `?bbox=${BOX}&format=geojson`, {
      'if-none-match': String(before.headers.etag),
    });
    t.equal(after.status, 200);
    t.same(
      JSON.parse(after.body).features.map(
        (feature: { properties: { name: string } }) => feature.properties.name,
      ),
      ['Amstel 10', 'Maas 3', 'Mixed'],
    );
    t.ok(
      Date.parse(String(after.headers['last-modified'])) >
        Date.parse(String(before.headers['last-modified'])),
    );
    const everything = JSON.parse((await as(keys.reader, '?format=geojson')).body);
    t.equal(everything.features[0].geometry, null, 'Amstel 1 stated without a location: unknown now');
    const outsider = await as(keys.outsider, `?bbox=${BOX}`);
    t.same(
      JSON.parse(outsider.body).map((well: { name: string }) => well.name),
      ['Maas 3'],
    );
    await upsertRegistry(api.db.sql, LOCATED_WELLS);
  });
});

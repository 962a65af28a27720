/**
 * `bbox` on the network endpoint over real HTTP: the tubes of the wells inside the box, with `tubes` as
 * well, an empty document in every format when no readable tube is inside, its validators, and the 410
 * of a delta whose box may hold other tubes since its token.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { tableFromIPC } from 'apache-arrow';
import t from 'tap';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { addMeasurements } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import { BOX, LOCATED_WELLS, seedLocatedWells, TUBES } from '../../helpers/locatedWells.js';
import { NETWORK } from '../../helpers/network.js';

const JANUARY = 'from=2024-01-01T00:00:00Z&to=2024-02-01T00:00:00Z';

t.test('the network endpoint with bbox', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const { keys, tubeIds } = await seedLocatedWells(sql);
  for (const id of tubeIds.values())
    await addMeasurements(sql, id, [['2024-01-02T00:00:00Z', String(id / 10)]]);
  const as = (key: { key: string }, query: string, headers: Record<string, string> = {}) =>
    get(api.base, `${NETWORK}?${JANUARY}${query}`, { 'x-api-key': key.key, ...headers });
  const tubesOf = (body: string): string[] =>
    JSON.parse(body).series.map((series: { tubeIdentifier: string }) => series.tubeIdentifier);
  const inBox = [TUBES.amstel1a, TUBES.amstel1b, TUBES.amstel10, TUBES.mixedReadable];

  t.test('the tubes of the wells inside the box, in discovery order, hidden ones left out', async (t) => {
    const response = await as(keys.reader, `&bbox=${BOX}`);
    t.equal(response.status, 200);
    t.same(tubesOf(response.body), inBox);
    t.notOk(response.body.includes(TUBES.mixedHidden));
    t.notOk(response.body.includes(TUBES.hidden));
    t.same(
      tubesOf((await as(keys.reader, '')).body),
      [TUBES.amstel1a, TUBES.amstel1b, TUBES.amstel10, TUBES.maas, TUBES.mixedReadable, TUBES.nowhere],
      'without a box: every readable tube',
    );
    t.same(tubesOf((await as(keys.all, `&bbox=${BOX}`)).body), [
      ...inBox.slice(0, 3),
      TUBES.hidden,
      TUBES.mixedReadable,
      TUBES.mixedHidden,
    ]);
  });

  t.test('with tubes as well, both apply; a hidden listed tube is still 404', async (t) => {
    const both = await as(
      keys.reader,
      `&bbox=${BOX}&tubes=${TUBES.maas},${TUBES.amstel10},${TUBES.amstel1a}`,
    );
    t.equal(both.status, 200);
    t.same(
      tubesOf(both.body),
      [TUBES.amstel1a, TUBES.amstel10],
      'the listed tube outside the box is left out',
    );
    for (const hidden of [TUBES.mixedHidden, TUBES.hidden]) {
      const refused = await as(keys.reader, `&bbox=${BOX}&tubes=${TUBES.amstel1a},${hidden}`);
      t.equal(refused.status, 404);
      t.match(JSON.parse(refused.body).detail, hidden);
    }
    const outside = await as(keys.reader, `&bbox=${BOX}&tubes=${TUBES.maas}`);
    t.same(tubesOf(outside.body), [], 'a listed tube outside the box: a document of no tube');
  });

  t.test('no readable tube inside the box: an empty document in the chosen format', async (t) => {
    for (const [key, box] of [
      [keys.outsider, BOX],
      [keys.reader, '-10,-10,-5,-5'],
      [keys.reader, '4.55,52.15,4.65,52.25'],
    ] as const) {
      const json = await as(key, `&bbox=${box}`);
      t.equal(json.status, 200);
      t.same(JSON.parse(json.body).series, []);
      const csv = await as(key, `&bbox=${box}&format=csv`);
      t.equal(csv.status, 200);
      t.equal(csv.body, 'tubeIdentifier,observedAt,value,unit,verticalDatum\r\n');
      const arrow = await as(key, `&bbox=${box}&format=arrow`);
      t.equal(arrow.status, 200);
      t.equal(tableFromIPC(arrow.bytes!).numRows, 0);
    }
    const onlyHidden = await as(keys.reader, '&bbox=4.55,52.15,4.65,52.25&format=csv');
    const nothing = await as(keys.reader, '&bbox=-10,-10,-5,-5&format=csv');
    t.equal(onlyHidden.headers.etag, nothing.headers.etag, 'a box of hidden wells answers as an empty one');
    t.equal((await as(keys.none, `&bbox=${BOX}`)).status, 403, 'a key that reads nothing: 403');
  });

  t.test('a malformed bbox is 400 naming it', async (t) => {
    for (const box of ['1,2,3', '5,0,4,1', '0,0,1,91', 'a,b,c,d', `${BOX}&bbox=${BOX}`]) {
      const response = await as(keys.reader, `&bbox=${box}`);
      t.equal(response.status, 400, box);
      t.same(Object.keys(JSON.parse(response.body).errors), ['bbox']);
    }
  });

  t.test('validators follow the box: a well that leaves it moves Last-Modified', async (t) => {
    const before = await as(keys.reader, `&bbox=${BOX}&tubes=${TUBES.amstel10}`);
    t.same(tubesOf(before.body), [TUBES.amstel10]);
    t.not(
      before.headers.etag,
      (await as(keys.reader, `&tubes=${TUBES.amstel10},${TUBES.maas}`)).headers.etag,
    );
    const token = String(before.headers['sync-token']);
    const plainToken = String((await as(keys.reader, '')).headers['sync-token']);
    await sleep(1000);
    await upsertRegistry(
      sql,
      LOCATED_WELLS.map((well) =>
        well.name === 'Amstel 10' ? { ...well, location: { longitude: 6, latitude: 52 } } : well,
      ),
    );
    const after = await as(keys.reader, `&bbox=${BOX}&tubes=${TUBES.amstel10}`, {
      'if-modified-since': String(before.headers['last-modified']),
    });
    t.equal(after.status, 200, 'not a 304: the response lost its tube');
    t.same(tubesOf(after.body), []);
    t.ok(
      Date.parse(String(after.headers['last-modified'])) >
        Date.parse(String(before.headers['last-modified'])),
    );

    const delta = await as(keys.reader, `&bbox=${BOX}&tubes=${TUBES.amstel10}&changedSince=${token}`);
    t.equal(delta.status, 410, 'a delta in a box whose wells moved since its token');
    const plain = await as(keys.reader, `&changedSince=${plainToken}`);
    t.equal(plain.status, 200, 'without a box, a location change is no 410');
    t.same(JSON.parse(plain.body).series, []);
    const unmoved = await as(keys.reader, `&bbox=${BOX}`);
    const since = await as(keys.reader, `&bbox=${BOX}&changedSince=${unmoved.headers['sync-token']}`);
    t.equal(since.status, 200, 'nothing moved since this token');
    await upsertRegistry(sql, LOCATED_WELLS);
  });
});

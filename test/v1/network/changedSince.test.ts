/**
 * `changedSince` on the network endpoint over real HTTP, rows imported by the real importer (which
 * logs what it changed): a delta holds what was written since the token and nothing else, tubes without
 * a change left out; applied to the earlier copy it gives the current one; aggregated, the touched
 * buckets recomputed; and the 400 and 410 of tokens that cannot be answered. The exactness of deltas
 * under concurrent imports is src/sync/'s (test/sync/).
 */
import t from 'tap';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { createKey, grantKey } from '../../../src/keys/store.js';
import { rememberKey } from '../../../testkit/outputCapture.js';
import { startApi } from '../../helpers/api.js';
import { januaryRows } from '../../helpers/conditional.js';
import { type HttpResponse, send } from '../../helpers/http.js';
import { OTHER, rowImporter, THIRD, TUBE, threeTubes } from '../../helpers/importFixtures.js';
import { networkPath } from '../../helpers/network.js';

const JANUARY = { from: '2024-01-01T00:00:00Z', to: '2024-02-01T00:00:00Z' };

interface Measurement {
  observedAt: string;
  value: number;
}
interface Network {
  syncToken: string;
  series: { tubeIdentifier: string; measurements: Measurement[] }[];
}

/** The copy a client keeps: each response applied in turn, an upsert by tube and observedAt. */
function applied(copy: Network, delta: Network): Network {
  const series = copy.series.map((kept) => {
    const changed = delta.series.find((element) => element.tubeIdentifier === kept.tubeIdentifier);
    if (!changed) return kept;
    const byInstant = new Map(kept.measurements.map((m) => [m.observedAt, m]));
    for (const m of changed.measurements) byInstant.set(m.observedAt, m);
    return {
      ...kept,
      measurements: [...byInstant.values()].sort((a, b) => (a.observedAt < b.observedAt ? -1 : 1)),
    };
  });
  return { ...copy, series, syncToken: delta.syncToken };
}

t.test('changedSince', async (t) => {
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  await upsertRegistry(sql, threeTubes());
  const reader = await createKey(sql, { name: 'reader', tubeIdentifiers: [TUBE, OTHER], allTubes: false });
  const other = await createKey(sql, { name: 'other', tubeIdentifiers: [TUBE, OTHER], allTubes: false });
  rememberKey(reader.key);
  rememberKey(other.key);
  const importRows = rowImporter(sql);
  await importRows([...januaryRows(TUBE), ...januaryRows(OTHER)]);

  const ask = (extra = '', key = reader.key, method = 'GET') =>
    send(api.base, method, networkPath(JANUARY, extra), { 'x-api-key': key });
  const since = (token: string, extra = '') => ask(`&changedSince=${token}${extra}`);
  const network = (response: HttpResponse): Network => {
    t.equal(response.status, 200);
    const body = JSON.parse(response.body) as Network;
    t.equal(body.syncToken, response.headers['sync-token'], 'the token of the header');
    return body;
  };

  const first = network(await ask());
  t.equal(first.series.length, 2);

  t.test('nothing written since: no series, a token to go on with', async (t) => {
    const delta = network(await since(first.syncToken));
    t.same(delta.series, []);
    const csv = await since(first.syncToken, '&format=csv');
    t.equal(csv.body, 'tubeIdentifier,observedAt,value,unit,verticalDatum\r\n', 'the CSV header alone');
    t.ok(csv.headers['sync-token']);
  });

  t.test('a corrected value and a new one: exactly those, of that tube alone', async (t) => {
    await importRows([
      [TUBE, '2024-01-02T05:00:00Z', '9.5'],
      [TUBE, '2024-01-20T00:00:00.5Z', '-0.25'],
      // The same value again changes nothing.
      [OTHER, '2024-01-02T00:00:00Z', '0'],
    ]);
    const delta = network(await since(first.syncToken));
    t.same(
      delta.series.map((series) => series.tubeIdentifier),
      [TUBE],
      'the tube without a change is left out',
    );
    t.same(delta.series[0]!.measurements, [
      { observedAt: '2024-01-02T05:00:00Z', value: 9.5 },
      { observedAt: '2024-01-20T00:00:00.5Z', value: -0.25 },
    ]);
    const now = network(await ask());
    t.same(applied(first, delta).series, now.series, 'applied to the earlier copy: the current one');
    const again = network(await since(delta.syncToken));
    t.same(again.series, [], 'and nothing since the delta');
  });

  t.test('aggregated: every touched bucket, recomputed over all its measurements', async (t) => {
    const daily = network(await ask('&aggregate=P1D'));
    await importRows([[OTHER, '2024-01-02T23:00:00Z', '4.5']]);
    const delta = network(await ask(`&aggregate=P1D&changedSince=${daily.syncToken}`));
    const now = network(await ask('&aggregate=P1D'));
    const day = now.series[1]!.measurements.find((bucket) => bucket.observedAt === '2024-01-02T00:00:00Z');
    t.same(
      delta.series,
      [{ ...now.series[1], measurements: [day] }],
      'the one bucket, as a whole response has it',
    );
  });

  t.test('a token of another key, or altered: 400 on changedSince', async (t) => {
    const foreign = network(await ask('', other.key)).syncToken;
    for (const token of [foreign, `${first.syncToken.slice(0, -2)}AA`]) {
      const refused = await since(token);
      t.equal(refused.status, 400);
      t.same(Object.keys(JSON.parse(refused.body).errors), ['changedSince']);
    }
  });

  t.test("the key's view changed since the token: 410, for GET and HEAD", async (t) => {
    const before = network(await ask()).syncToken;
    await grantKey(sql, reader.keyId, [THIRD]);
    const gone = await since(before);
    t.equal(gone.status, 410);
    t.equal(gone.headers['content-type'], 'application/problem+json');
    t.match(JSON.parse(gone.body).detail, /without changedSince/);
    t.equal((await ask(`&changedSince=${before}`, reader.key, 'HEAD')).status, 410);
    const fresh = network(await ask());
    t.equal(fresh.series.length, 3, 'a sync without it starts again');
    t.equal((await since(fresh.syncToken)).status, 200);
  });
});

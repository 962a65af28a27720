/**
 * The network endpoint's body over real HTTP on plain PostgreSQL: each JSON element byte for byte the
 * series endpoint's, the CSV row for row the JSON, raw and aggregated, under every coding, with tubes
 * that span batches, tubes without measurements and tubes listed in another order. The TimescaleDB
 * path: timescale.test.ts.
 */
import t from 'tap';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import {
  addOrderedNetwork,
  decoded,
  LOCAL_JANUARY,
  NETWORK,
  networkPath,
  provesNetworkBody,
} from '../../helpers/network.js';

const JANUARY = LOCAL_JANUARY;

t.test('the network body against the series endpoint', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const { precise, empty, quoted, long, inOrder } = await addOrderedNetwork(sql);
  const [hidden] = await addWell(sql, 'A hidden', [{ number: '1' }]);
  await addMeasurements(sql, hidden!.id, [['2024-01-02T00:00:00Z', '3']]);
  const readable = [precise, empty, quoted, long];
  const { key } = await addKey(sql, { tubeIds: readable.map((tube) => tube.id) });
  const everything = await addKey(sql, { allTubes: true });

  t.test('every tube the key may read, raw', async (t) => {
    const network = await provesNetworkBody(t, api.base, key, JANUARY, inOrder);
    t.same(
      network.series.map((series) => series.measurements.length),
      [3 * 1440, 7, 0, 2],
      'a tube without measurements is there, with []',
    );
  });

  t.test('aggregated', async (t) => {
    await provesNetworkBody(t, api.base, key, { ...JANUARY, aggregate: 'P1D' }, inOrder);
    await provesNetworkBody(t, api.base, key, { ...JANUARY, aggregate: 'PT1H' }, inOrder);
  });

  t.test('listed tubes, in discovery order whatever the order listed', async (t) => {
    const listed = [quoted.identifier.toUpperCase(), long.identifier];
    await provesNetworkBody(t, api.base, key, { ...JANUARY, tubes: listed }, [
      long.identifier,
      quoted.identifier,
    ]);
  });

  t.test('a key of every tube reads the hidden one too, first', async (t) => {
    await provesNetworkBody(t, api.base, everything.key, JANUARY, [hidden!.identifier, ...inOrder]);
  });

  t.test('gzip and br', async (t) => {
    for (const coding of ['gzip', 'br']) {
      await provesNetworkBody(t, api.base, key, JANUARY, inOrder, { 'accept-encoding': coding });
    }
  });

  t.test('an interval without measurements: every tube, each empty; the CSV header alone', async (t) => {
    const quiet = { from: '2023-01-01T00:00:00Z', to: '2023-01-02T00:00:00Z' };
    const network = await provesNetworkBody(t, api.base, key, quiet, inOrder);
    t.same(
      network.series.map((series) => series.measurements),
      [[], [], [], []],
    );
    const csv = await get(api.base, networkPath(quiet, '&format=csv'), { 'x-api-key': key });
    t.equal(csv.body, 'tubeIdentifier,observedAt,value,unit,verticalDatum\r\n');
  });

  t.test('headers of the CSV', async (t) => {
    const csv = await get(api.base, networkPath(JANUARY, '&format=csv'), { 'x-api-key': key });
    t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8; header=present');
    t.equal(
      csv.headers['content-disposition'],
      'attachment; filename="groundwater-measurements_20231231T230000Z_20240201T000000Z.csv"',
    );
    t.match(String(csv.headers['sync-token']), /^[A-Za-z0-9_-]{1,200}$/);
    t.match(String(csv.headers.etag), /^W\//);
    t.equal(csv.headers['transfer-encoding'], 'chunked', 'streamed');
  });

  t.test('a key whose every-tube grant finds no tube: an empty list', async (t) => {
    const bare = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
    const nobody = await addKey(bare.db.sql, { allTubes: true });
    const response = await get(bare.base, `${NETWORK}?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z`, {
      'x-api-key': nobody.key,
    });
    t.equal(response.status, 200);
    const token = String(response.headers['sync-token']);
    t.equal(
      decoded(response),
      `{"from":"2024-01-01T00:00:00Z","to":"2024-01-02T00:00:00Z","syncToken":"${token}","series":[]}`,
    );
  });
});

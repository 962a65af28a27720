/**
 * The network endpoint with measurements in a TimescaleDB hypertable (PGlite with TimescaleDB, see
 * testkit/timescale.ts), compressed chunks and uncompressed ones: each JSON element byte for byte the
 * series endpoint's, the CSV row for row the JSON, the Arrow value for value the JSON (two readers), raw
 * and aggregated (time_bucket's path).
 */
import t from 'tap';
import { migrate, usesTimescaleDb } from '../../../src/db/migrate.js';
import { addKey, addMeasurements, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { startTimescale } from '../../../testkit/timescale.js';
import { startApi } from '../../helpers/api.js';
import { provesNetworkBody } from '../../helpers/network.js';
import { provesArrowAsJson } from '../../helpers/networkArrow.js';

const timescale = await startTimescale();
t.teardown(() => timescale.stop());

/** Two months across a chunk border: the first chunk is compressed below. */
const INTERVAL = { from: '2024-01-01T00:00:00+01:00', to: '2024-03-01T00:00:00Z' };

t.test('the network endpoint on TimescaleDB', async (t) => {
  // pglite-socket serves one connection at a time: the test writes through the app's own pool of one.
  const api = await startApi(t, { databaseUrl: timescale.url, poolMax: 1, env: { LIMITS_ENABLED: 'false' } });
  const sql = api.appSql;
  await migrate(sql);
  t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
  const [second, tenth, empty] = await addWell(sql, 'T 1', [
    { number: '2' },
    { number: '10' },
    { number: '3' },
  ]);
  const [other] = await addWell(sql, 'T 0', [{ number: '1', unit: 'cm' }]);
  await addRegularSeries(sql, second!.id, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z', '17 minutes');
  await addRegularSeries(sql, other!.id, '2023-12-31T23:00:00Z', '2024-02-15T00:00:00Z', '1 hour');
  await addMeasurements(sql, tenth!.id, [
    ['2023-12-31T23:00:00Z', '-1.23'],
    ['2024-01-20T00:00:00.000001Z', '0.1'],
    ['2024-02-29T23:59:59.999999Z', '12.3456789012345'],
  ]);
  await sql`select compress_chunk(c) from show_chunks('measurements', older_than => '2024-01-20'::timestamptz) c`;
  const [compressed] = await sql<{ count: number }[]>`
    select count(*)::int as count from timescaledb_information.chunks
    where hypertable_name = 'measurements' and is_compressed`;
  t.ok(compressed!.count > 0, 'a compressed chunk is read');
  const { key } = await addKey(sql, { tubeIds: [second!.id, tenth!.id, empty!.id, other!.id] });
  const inOrder = [other!, second!, empty!, tenth!].map((tube) => tube.identifier);

  await provesNetworkBody(t, api.base, key, INTERVAL, inOrder);
  await provesNetworkBody(t, api.base, key, { ...INTERVAL, aggregate: 'P1D' }, inOrder);
  await provesNetworkBody(t, api.base, key, { ...INTERVAL, aggregate: 'PT15M' }, inOrder);
  await provesArrowAsJson(t, api.base, key, INTERVAL);
  await provesArrowAsJson(t, api.base, key, { ...INTERVAL, aggregate: 'P1D' });
  await provesNetworkBody(t, api.base, key, { ...INTERVAL, tubes: [tenth!.identifier, other!.identifier] }, [
    other!.identifier,
    tenth!.identifier,
  ]);
});

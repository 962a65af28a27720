/**
 * The network endpoint with measurements in a native TimescaleDB hypertable (testkit/timescale.ts),
 * compressed chunks and uncompressed ones: each JSON element byte for byte the
 * series endpoint's, the CSV row for row the JSON, the Arrow value for value the JSON (two readers), raw
 * and aggregated (time_bucket's path).
 */
import t from 'tap';
import { addKey, addMeasurements, addRegularSeries } from '../../../testkit/fixtures.js';
import { provesNetworkBody } from '../../helpers/network.js';
import { provesArrowAsJson } from '../../helpers/networkArrow.js';
import { compressChunks, fourTubes, timescaleApi } from '../../helpers/timescale.js';

/** Two months across a chunk border: the first chunk is compressed below. */
const INTERVAL = { from: '2024-01-01T00:00:00+01:00', to: '2024-03-01T00:00:00Z' };

t.test('the network endpoint on TimescaleDB', async (t) => {
  const api = await timescaleApi(t);
  if (!api) return;
  const { sql } = api.db;
  const { second, tenth, empty, other } = await fourTubes(sql);
  await addRegularSeries(sql, second.id, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z', '17 minutes');
  await addRegularSeries(sql, other.id, '2023-12-31T23:00:00Z', '2024-02-15T00:00:00Z', '1 hour');
  await addMeasurements(sql, tenth.id, [
    ['2023-12-31T23:00:00Z', '-1.23'],
    ['2024-01-20T00:00:00.000001Z', '0.1'],
    ['2024-02-29T23:59:59.999999Z', '12.3456789012345'],
  ]);
  const { compressed, uncompressed } = await compressChunks(sql, '2024-01-20T00:00:00Z');
  t.ok(
    compressed > 0 && uncompressed > 0,
    `compressed chunks (${compressed}) and row chunks (${uncompressed})`,
  );
  const { key } = await addKey(sql, { tubeIds: [second.id, tenth.id, empty.id, other.id] });
  const inOrder = [other, second, empty, tenth].map((tube) => tube.identifier);

  await provesNetworkBody(t, api.base, key, INTERVAL, inOrder);
  await provesNetworkBody(t, api.base, key, { ...INTERVAL, aggregate: 'P1D' }, inOrder);
  await provesNetworkBody(t, api.base, key, { ...INTERVAL, aggregate: 'PT15M' }, inOrder);
  await provesArrowAsJson(t, api.base, key, INTERVAL);
  await provesArrowAsJson(t, api.base, key, { ...INTERVAL, aggregate: 'P1D' });
  await provesNetworkBody(t, api.base, key, { ...INTERVAL, tubes: [tenth.identifier, other.identifier] }, [
    other.identifier,
    tenth.identifier,
  ]);
});

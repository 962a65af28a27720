/**
 * Latest with measurements in a native TimescaleDB hypertable whose chunks are compressed
 * (testkit/timescale.ts): each tube's latest, with and without a status filter, the
 * same in JSON, CSV, Arrow and GeoJSON, read by their readers, as the measurements themselves say.
 */
import t from 'tap';
import { addKey, addMeasurements, addRegularSeries } from '../../../testkit/fixtures.js';
import { expectedLatest, provesLatestFormats, refreshLatest, withoutStatus } from '../../helpers/latest.js';
import { compressChunks, fourTubes, timescaleApi } from '../../helpers/timescale.js';

t.test('latest on TimescaleDB with compressed chunks', async (t) => {
  const api = await timescaleApi(t);
  if (!api) return;
  const { sql } = api.db;
  const { second, tenth, empty, other } = await fourTubes(sql);
  await sql`update wells set longitude = 4.9, latitude = 52.37 where name = 'T 1'`;
  await addRegularSeries(sql, second.id, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z', '17 minutes');
  await addRegularSeries(sql, other.id, '2023-12-31T23:00:00Z', '2024-01-15T00:00:00Z', '1 hour');
  await addMeasurements(sql, tenth.id, [
    ['2023-12-31T23:00:00Z', '-1.23'],
    ['2024-01-20T00:00:00.000001Z', '0.1'],
  ]);
  // The newest month rejected, the one before approved: a filter reaches into compressed chunks.
  await sql`update measurements set status = 2 where observed_at >= '2024-02-01'`;
  await sql`update measurements set status = 0 where observed_at < '2024-01-10'`;
  await refreshLatest(sql);
  const { compressed, uncompressed } = await compressChunks(sql);
  t.ok(compressed > 0 && uncompressed === 0, `every chunk compressed (${compressed})`);
  const { key } = await addKey(sql, { tubeIds: [second.id, tenth.id, empty.id, other.id] });
  const inOrder = [other, second, empty, tenth].map((tube) => tube.identifier);

  const every = await expectedLatest(sql, inOrder);
  t.same(
    every.map((row) => row.tubeIdentifier),
    [other, second, tenth].map((tube) => tube.identifier),
  );
  await provesLatestFormats(t, api.base, key, '', withoutStatus(every));
  for (const status of ['approved', 'provisional', 'rejected,provisional']) {
    const expected = await expectedLatest(sql, inOrder, status.split(','));
    await provesLatestFormats(t, api.base, key, `status=${status}&include=status`, expected);
  }
});

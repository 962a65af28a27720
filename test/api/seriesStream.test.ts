/**
 * openSeriesStream in process, against a real PostgreSQL: a long series streams without leaving its
 * rows behind in V8's old generation, so the server's memory does not grow with the length of the
 * series (bench/series.ts measures the resident memory of a real server; this pins down the cause).
 * Without emptying each batch once written, ~50 MB of a year's rows were promoted and waited there
 * for a full collection.
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { setImmediate as tick } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import t from 'tap';
import { openSeriesStream } from '../../src/api/seriesStream.js';
import type { Client } from '../../src/auth/clients.js';
import { connect } from '../../src/db/connect.js';
import { freshDatabase } from '../helpers/database.js';
import { addRegularSeries, addWell } from '../helpers/fixtures.js';

const FROM = '2024-01-01T00:00:00Z';
/** 120 days of 1-minute data: 172,800 measurements, ~9 MB of JSON, ~86 batches. */
const TO = '2024-04-30T00:00:00Z';

const oldGenerationMb = () =>
  getHeapSpaceStatistics()
    .filter((space) => space.space_name === 'old_space' || space.space_name === 'large_object_space')
    .reduce((sum, space) => sum + space.space_used_size, 0) / 1e6;

t.test('a long series leaves no rows behind in the old generation', async (t) => {
  const db = await freshDatabase(t);
  const [tube] = await addWell(db.sql, 'Long', [{ number: '1' }]);
  await addRegularSeries(db.sql, tube!.id, FROM, TO, '1 minute');
  const sql = connect(db.url, { max: 2 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const client: Client = { keyId: 'test', allTubes: true, grants: new Set() };

  async function drain(to: string): Promise<number> {
    const stream = await openSeriesStream(sql, { client, tubeIdentifier: tube!.identifier, from: FROM, to });
    let bytes = 0;
    for await (const chunk of stream!) bytes += (chunk as Buffer).length;
    return bytes;
  }
  // Warm-up, as a server that has run for a while: compiled code, the driver's statement, the pool.
  for (let i = 0; i < 3; i++) await drain(TO);

  let fullCollections = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        fullCollections++;
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const before = oldGenerationMb();
  const bytes = await drain(TO);
  const grown = oldGenerationMb() - before;
  await tick(); // GC entries are delivered asynchronously
  observer.disconnect();

  t.ok(bytes > 9_000_000, `the series was streamed (${bytes} bytes)`);
  // A full collection would hide promoted rows (it frees them), so none may have been needed.
  t.equal(fullCollections, 0, 'no full collection was needed');
  t.ok(grown < 4, `old generation grew by ${grown.toFixed(1)} MB (less than 4 MB)`);
});

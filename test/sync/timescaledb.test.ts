/**
 * Sync on a native TimescaleDB hypertable (testkit/timescale.ts): the change log written by the import's
 * plain INSERT and upsert, a correction in a compressed chunk, and the raw and aggregated (time_bucket)
 * deltas, each bucket the same numbers as the whole series' bucket. Concurrency is test/sync/sync.test.ts's.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { changedMeasurementsSelect, deltaSelect } from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';
import { timescaleServerOrSkip } from '../helpers/database.js';
import { HEADER, registeredDatabase, TUBE } from '../helpers/importFixtures.js';
import { bucketLine, point, syncDelta, wholeBuckets } from '../helpers/sync.js';
import { chunksInPlan, chunksOverlapping, compressChunks } from '../helpers/timescale.js';

const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-04-01T00:00:00Z';

const server = timescaleServerOrSkip(t);
if (server) {
  const sql = await registeredDatabase(t, server);

  /** Imports `hours` hourly rows of TUBE from FROM, value: the hour's index, or -5 for `corrected` ones. */
  const importHours = (hours: number, corrected: number[] = []) => {
    const lines = Array.from({ length: hours }, (_, n) => {
      const at = new Date(Date.parse(FROM) + n * 3_600_000).toISOString();
      return `${TUBE},${at},${corrected.includes(n) ? -5 : n}\n`;
    });
    return importMeasurements(sql, Readable.from([HEADER, ...lines]), { name: 'hours.csv' });
  };

  t.test('raw and aggregated deltas on a hypertable, across a compressed chunk', async (t) => {
    t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
    const ids = await sql<{ id: number }[]>`select id from tubes order by identifier`;
    const [tube, other] = ids.map((r) => r.id) as [number, number];
    const delta = (since: Parameters<typeof syncDelta>[1], aggregateSeconds?: number) =>
      syncDelta(sql, since, [tube, other], {
        from: FROM,
        to: TO,
        ...(aggregateSeconds && { aggregateSeconds, bucketFunction: 'time_bucket' as const }),
      });

    const start = await point(sql);
    // 60 days: three 30-day chunks.
    t.same(await importHours(24 * 60), { rows: 1440, inserted: 1440, updated: 0, unchanged: 0 });
    const runs = await sql<
      { run: string }[]
    >`select tube_id || ' ' || first_at || ' ' || last_at as run from measurement_changes`;
    t.same(
      runs.map((r) => r.run),
      [`${tube} 2024-01-01 00:00:00+00 2024-02-29 23:00:00+00`],
      'the plain INSERT: one run',
    );
    t.equal((await delta(start)).rows.length, 1440);
    const token = await point(sql);
    t.same(await compressChunks(sql), { compressed: 3, uncompressed: 0 }, 'every chunk compressed');

    // The same rows again, two of them corrected (one in the compressed January chunk), one day added.
    t.same(await importHours(24 * 61, [100, 1000]), {
      rows: 1464,
      inserted: 24,
      updated: 2,
      unchanged: 1438,
    });
    const changed = (await delta(token)).rows;
    t.same(changed.slice(0, 2), ['0 2024-01-05T04:00:00.000Z -5', '0 2024-02-11T16:00:00.000Z -5']);
    t.same(changed.length, 26, 'the two corrections and the 24 new rows, nothing else');

    const bucketing = { bucketFunction: 'time_bucket' as const, seconds: 86_400 };
    const days = await wholeBuckets(sql, tube, FROM, TO, bucketing);
    const touched = days.filter((d) =>
      ['2024-01-05', '2024-02-11', '2024-03-01'].includes(d.observedAt.slice(0, 10)),
    );
    t.equal(touched.length, 3);
    t.same(
      (await delta(token, 86_400)).rows,
      touched.map((d) => bucketLine(0, d)),
      'whole days, recomputed',
    );
    t.same((await delta(await point(sql), 86_400)).rows, [], 'nothing since now');

    // Each changed run is read from its own chunks only: excluded at run time, as its bounds are known.
    for (const aggregate of [undefined, { bucketFunction: 'time_bucket' as const, seconds: 86_400 }]) {
      const plan = await sql.begin('isolation level repeatable read read only', async (tx) => {
        const select = changedMeasurementsSelect({
          tubeIds: [tube, other],
          from: FROM,
          to: TO,
          since: token,
          aggregate,
        });
        return (await tx.unsafe(`explain (analyze, costs off, timing off) ${select}`)).map((r) =>
          String(r['QUERY PLAN']),
        );
      });
      t.match(
        plan.join('\n'),
        /ChunkAppend\) on measurements[\s\S]*Chunks excluded during runtime: [1-9]/,
        aggregate ? 'buckets' : 'rows',
      );
    }

    // As the route reads a delta, knowing first what the change log holds (deltaSelect): its select
    // plans only the chunks of what changed, none when nothing did, so never one outside the interval
    // its document locked before its snapshot (src/engine/chunkLocks.ts).
    const beforeMarch = await point(sql);
    const march = Array.from(
      { length: 24 },
      (_, h) => `${TUBE},2024-03-02T${String(h).padStart(2, '0')}:00:00Z,${h}\n`,
    );
    await importMeasurements(sql, Readable.from([HEADER, ...march]), { name: 'march.csv' });
    const marchChunks = await chunksOverlapping(sql, '2024-03-02T00:00:00Z', '2024-03-03T00:00:00Z');
    t.ok(marchChunks.length > 0 && (await chunksOverlapping(sql, FROM, TO)).length > marchChunks.length);
    const planned = (since: SyncPoint, aggregate?: { seconds: number }, statuses?: number[]) =>
      sql.begin('isolation level repeatable read read only', async (tx) => {
        const request = {
          tubeIds: [tube, other],
          from: FROM,
          to: TO,
          since,
          aggregate,
          statuses,
          withStatus: true,
        };
        const select = await deltaSelect(tx, request);
        if (select === undefined) throw new Error('refused');
        return chunksInPlan([...(await tx.unsafe(`explain (format json) ${select}`))]);
      });
    const now = await point(sql);
    for (const [name, aggregate] of [
      ['rows', undefined],
      ['days', { seconds: 86_400 }],
      ['hours', { seconds: 3_600 }],
    ] as const) {
      t.same(await planned(beforeMarch, aggregate), marchChunks, `${name}: the chunks of what changed`);
      t.same(await planned(beforeMarch, aggregate, [0]), marchChunks, `${name}, approved: the same`);
      t.same(await planned(now, aggregate), [], `${name}: nothing changed, no chunk`);
    }
    t.same(
      (await delta(beforeMarch, 86_400)).rows,
      (await wholeBuckets(sql, tube, FROM, TO, bucketing))
        .filter((d) => d.observedAt.startsWith('2024-03-02'))
        .map((d) => bucketLine(0, d)),
      'the day, as the whole series has it',
    );
  });
}

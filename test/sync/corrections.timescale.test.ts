/**
 * The corrections property of corrections.property.test.ts on a native TimescaleDB hypertable
 * (testkit/timescale.ts), with chunks compressed at random points: imports, status changes and removals
 * then write into compressed chunks.
 */
import fc from 'fast-check';
import t from 'tap';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { CLIENT_VIEWS, operations, registerTubes, runOperations } from '../helpers/corrections.js';
import { compressingWriters } from '../helpers/correctionWriters.js';
import { freshDatabase, timescaleServerOrSkip } from '../helpers/database.js';

const RUNS = Number(process.env.CORRECTIONS_TIMESCALE_RUNS ?? 40);

// Sequences of imports, compressions and syncs, each in their own transactions: on a busy machine they
// outlast the suite's timeout per file.
t.setTimeout(20 * 60_000);

t.test('every client ends equal to a full pull, across compressed chunks', async (t) => {
  const server = timescaleServerOrSkip(t);
  if (!server) return;
  const { sql } = await freshDatabase(t, { server });
  t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
  const tubeIds = await registerTubes(sql);
  const writers = compressingWriters(sql);
  let compressedWrites = 0;
  await fc.assert(
    fc.asyncProperty(operations(2, CLIENT_VIEWS.length, { compress: true }), async (ops) => {
      const problem = await runOperations(sql, tubeIds, writers, ops);
      if (problem) throw new Error(problem);
      const compressedAt = ops.findIndex((op) => op.kind === 'compress');
      if (compressedAt !== -1 && ops.slice(compressedAt).some((op) => op.kind !== 'sync')) compressedWrites++;
    }),
    { numRuns: RUNS },
  );
  t.ok(compressedWrites > 0, `${compressedWrites} of ${RUNS} sequences wrote after compressing`);
});

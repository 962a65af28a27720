/**
 * The corrections property of corrections.property.test.ts on a TimescaleDB hypertable (PGlite with
 * TimescaleDB, testkit/timescale.ts), with chunks compressed at random points: imports, status changes
 * and removals then write into compressed chunks. PGlite takes no COPY FROM STDIN and serves one
 * connection, so imports take the staging path's SQL half, and the runs are fewer.
 */
import fc from 'fast-check';
import t from 'tap';
import { connect } from '../../src/db/connect.js';
import { migrate, usesTimescaleDb } from '../../src/db/migrate.js';
import { startTimescale } from '../../testkit/timescale.js';
import { CLIENT_VIEWS, operations, registerTubes, runOperations } from '../helpers/corrections.js';
import { stagedWriters } from '../helpers/correctionWriters.js';

const RUNS = Number(process.env.CORRECTIONS_TIMESCALE_RUNS ?? 25);

// PGlite serves one connection, slowly: the sequences outlast the suite's timeout per file when busy.
t.setTimeout(20 * 60_000);

const timescale = await startTimescale();
t.teardown(() => timescale.stop());
const sql = connect(timescale.url, { max: 1 });
t.teardown(() => sql.end({ timeout: 5 }));

t.test('every client ends equal to a full pull, across compressed chunks', async (t) => {
  await migrate(sql);
  t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
  const tubeIds = await registerTubes(sql);
  const writers = stagedWriters(sql);
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

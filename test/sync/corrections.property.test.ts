/**
 * Corrections in sync deltas, model-based: random sequences of imports (with and without status),
 * status changes, removals and syncs by clients of every view (status filters, include=status,
 * buckets). After every sync, each client's copy (its last copy with the delta applied as the client
 * guide says) must equal a full pull in the same snapshot; a delta reports only measurements that
 * changed since the token, and refuses (410) only when a measurement the client held left its view.
 * A naive writer, whose removals leave no trace in the change history, is run as a control and must
 * be caught.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import {
  CLIENT_VIEWS,
  fullImport,
  INSTANTS,
  type Operation,
  operations,
  registerTubes,
  runOperations,
} from '../helpers/corrections.js';
import { naiveRemoval, realWriters } from '../helpers/correctionWriters.js';
import { freshDatabase } from '../helpers/database.js';

const RUNS = Number(process.env.CORRECTIONS_RUNS ?? 40);

// Hundreds of random sequences, each of imports and syncs in their own transactions, outlast the
// suite's timeout per file on a busy machine.
t.setTimeout(20 * 60_000);

async function registered(t: Test) {
  const { sql } = await freshDatabase(t);
  return { sql, tubeIds: await registerTubes(sql) };
}

t.test('every client ends equal to a full pull, on plain PostgreSQL', async (t) => {
  const { sql, tubeIds } = await registered(t);
  const writers = realWriters(sql);
  await fc.assert(
    fc.asyncProperty(operations(2, CLIENT_VIEWS.length), async (ops) => {
      const problem = await runOperations(sql, tubeIds, writers, ops);
      if (problem) throw new Error(problem);
    }),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} random sequences of ${INSTANTS} instants per tube`);
});

t.test('every client ends equal to a full pull, when mostly corrections follow a full import', async (t) => {
  const { sql, tubeIds } = await registered(t);
  const writers = realWriters(sql);
  await fc.assert(
    fc.asyncProperty(operations(2, CLIENT_VIEWS.length, { correcting: true }), async (ops) => {
      const problem = await runOperations(sql, tubeIds, writers, ops);
      if (problem) throw new Error(problem);
    }),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} random sequences of corrections of ${INSTANTS} instants per tube`);
});

t.test('every client ends equal to a full pull after status changes of one tube, then of both', async (t) => {
  const { sql, tubeIds } = await registered(t);
  const syncAll: Operation[] = CLIENT_VIEWS.map((_, client) => ({ kind: 'sync', client }));
  const ops: Operation[] = [
    fullImport(2),
    ...syncAll,
    { kind: 'status', status: 0, tubes: [1], from: 2, to: 9 },
    ...syncAll,
    { kind: 'status', status: 2, tubes: [0], from: 0, to: 4 },
    ...syncAll,
    { kind: 'status', status: 0, tubes: 'all', from: 3, to: 12 },
    ...syncAll,
  ];
  t.equal(await runOperations(sql, tubeIds, realWriters(sql), ops), undefined);
});

t.test('control: removals that leave no correction are caught', async (t) => {
  const { sql, tubeIds } = await registered(t);
  const writers = { ...realWriters(sql), remove: naiveRemoval(sql) };
  const result = await fc.check(
    fc.asyncProperty(operations(2, CLIENT_VIEWS.length), async (ops) => {
      const problem = await runOperations(sql, tubeIds, writers, ops);
      if (problem) throw new Error(problem);
    }),
    { numRuns: 200 },
  );
  t.ok(result.failed, 'the naive writer leaves a client with rows that were removed');
});

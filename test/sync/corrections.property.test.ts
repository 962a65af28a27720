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
import type { Sql } from '../../src/db/connect.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { currentSyncPoint } from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';
import {
  applyDelta,
  CLIENT_VIEWS,
  type Copy,
  fullPull,
  INSTANTS,
  instant,
  type Operation,
  operations,
} from '../helpers/corrections.js';
import { naiveRemoval, realWriters, type Writers } from '../helpers/correctionWriters.js';
import { freshDatabase } from '../helpers/database.js';
import { ALL, snapshotRead } from '../helpers/sync.js';

const TUBES = ['1b4e28ba-2fa1-11d2-883f-0016d3cca427', '1b4e28ba-2fa1-11d2-883f-0016d3cca428'];
const RUNS = Number(process.env.CORRECTIONS_RUNS ?? 40);

interface Client {
  since: SyncPoint;
  copy: Copy;
  /** Operations applied when the token was read: what changed after it starts there. */
  seen: number;
}

/** Runs `ops`; returns the first disagreement with the model, or undefined. */
async function run(
  sql: Sql,
  tubeIds: number[],
  writers: Writers,
  ops: Operation[],
): Promise<string | undefined> {
  await sql`truncate measurements, measurement_changes, measurement_corrections, latest_measurements`;
  const model = new Map<string, { value: number; status: number }>();
  /** Per operation, the keys whose value or status it changed, or that it inserted or removed. */
  const changed: Set<string>[] = [];
  const clients = new Map<number, Client>();
  const keyOf = (tube: number, at: number) => `${tube} ${new Date(instant(at)).toISOString()}`;
  for (const [index, op] of ops.entries()) {
    const touched = new Set<string>();
    changed.push(touched);
    const set = (key: string, next: { value: number; status: number } | undefined) => {
      const before = model.get(key);
      if (before?.value === next?.value && before?.status === next?.status) return;
      touched.add(key);
      if (next) model.set(key, next);
      else model.delete(key);
    };
    switch (op.kind) {
      case 'import':
        await writers.import(tubeIds, op);
        for (const row of op.rows) {
          const key = keyOf(row.tube, row.at);
          set(key, { value: row.value, status: row.status ?? model.get(key)?.status ?? 1 });
        }
        break;
      case 'status': {
        await writers.status(tubeIds, op);
        const tubes = op.tubes === 'all' ? tubeIds.map((_, i) => i) : op.tubes;
        for (const tube of tubes) {
          for (let at = op.from; at < op.to; at++) {
            const key = keyOf(tube, at);
            const row = model.get(key);
            if (row) set(key, { value: row.value, status: op.status });
          }
        }
        break;
      }
      case 'remove':
        await writers.remove(tubeIds, op);
        for (let at = op.from; at < op.to; at++) set(keyOf(op.tube, at), undefined);
        break;
      case 'compress':
        await writers.compress?.();
        break;
      case 'sync': {
        const view = CLIENT_VIEWS[op.client]!;
        const problem = await snapshotRead(sql, async (tx) => {
          const now = await currentSyncPoint(tx, ALL);
          const whole = await fullPull(tx, tubeIds, view);
          const client = clients.get(op.client);
          clients.set(op.client, { since: now, copy: whole, seen: index + 1 });
          if (!client) return undefined;
          const held = new Map(client.copy);
          const applied = await applyDelta(tx, tubeIds, view, client.since, client.copy);
          const since = new Set(changed.slice(client.seen).flatMap((keys) => [...keys]));
          const left = [...held.keys()].filter((key) => !whole.has(key));
          if (applied.refused) {
            // Aggregated keys are buckets: a refusal is right when a bucket the client held is gone.
            return left.length > 0 ? undefined : `client ${op.client} refused with nothing it held gone`;
          }
          const unchanged = view.aggregate ? [] : applied.keys.filter((key) => !since.has(key));
          if (unchanged.length > 0) return `client ${op.client} was sent unchanged ${unchanged.join(', ')}`;
          const copy = [...client.copy].sort().join('\n');
          const expected = [...whole].sort().join('\n');
          return copy === expected ? undefined : `client ${op.client}: copy\n${copy}\nfull pull\n${expected}`;
        });
        if (problem) return `after operation ${index}: ${problem}`;
        break;
      }
    }
    const stored = await snapshotRead(sql, (tx) =>
      fullPull(tx, tubeIds, { withStatus: true, aggregate: false }),
    );
    const modelled = [...model].map(
      ([key, row]) => `${key},${row.value} ${['approved', 'provisional', 'rejected'][row.status]}`,
    );
    const storedRows = [...stored].map(([key, text]) => `${key},${text}`);
    if (modelled.sort().join('\n') !== storedRows.sort().join('\n')) {
      return `after operation ${index} (${op.kind}): the database holds\n${storedRows.join('\n')}\nthe model\n${modelled.join('\n')}`;
    }
  }
  return undefined;
}

async function registered(t: Test) {
  const { sql } = await freshDatabase(t);
  await upsertRegistry(sql, [
    { name: 'W1', tubes: [{ identifier: TUBES[0]!, number: '1' }] },
    { name: 'W2', tubes: [{ identifier: TUBES[1]!, number: '1' }] },
  ]);
  const ids = await sql<{ id: number }[]>`select id from tubes order by identifier`;
  return { sql, tubeIds: ids.map((row) => row.id) };
}

t.test('every client ends equal to a full pull, on plain PostgreSQL', async (t) => {
  const { sql, tubeIds } = await registered(t);
  const writers = realWriters(sql);
  await fc.assert(
    fc.asyncProperty(operations(2, CLIENT_VIEWS.length), async (ops) => {
      const problem = await run(sql, tubeIds, writers, ops);
      if (problem) throw new Error(problem);
    }),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} random sequences of ${INSTANTS} instants per tube`);
});

t.test('control: removals without prior versions are caught', async (t) => {
  const { sql, tubeIds } = await registered(t);
  const writers = { ...realWriters(sql), remove: naiveRemoval(sql) };
  const result = await fc.check(
    fc.asyncProperty(operations(2, CLIENT_VIEWS.length), async (ops) => {
      const problem = await run(sql, tubeIds, writers, ops);
      if (problem) throw new Error(problem);
    }),
    { numRuns: 200 },
  );
  t.ok(result.failed, 'the naive writer leaves a client with rows that were removed');
});

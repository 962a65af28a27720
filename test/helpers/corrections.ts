/**
 * A model of a network's measurements and of sync clients that apply deltas as the client guide says,
 * for the property tests of corrections in sync (test/sync/corrections*.test.ts): the database and the
 * model take the same operations, and every client's copy after a delta must equal a full pull.
 */
import fc from 'fast-check';
import type { Queryable, Sql } from '../../src/db/connect.js';
import { bucketsOf } from '../../src/engine/read/buckets.js';
import { STATUSES } from '../../src/engine/schemas.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import {
  changedMeasurementsSelect,
  currentSyncPoint,
  deltaRefusal,
  deltaSelect,
  REMOVED_CODE,
} from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';
import { ALL, snapshotRead } from './sync.js';

export const FROM = '2024-01-01T00:00:00Z';
/** Twelve hourly instants per tube. */
export const INSTANTS = 12;
export const TO = '2024-01-01T12:00:00Z';
/** Buckets of aggregated clients: three hours, four per interval. */
export const BUCKET_SECONDS = 3 * 3600;

export const instant = (i: number) =>
  new Date(Date.parse(FROM) + i * 3_600_000).toISOString().replace('.000Z', 'Z');

export type Operation =
  | {
      kind: 'import';
      rows: { tube: number; at: number; value: number; status?: number }[];
      withStatus: boolean;
    }
  | { kind: 'status'; status: number; tubes: number[] | 'all'; from: number; to: number }
  | { kind: 'remove'; tube: number; from: number; to: number }
  | { kind: 'compress' }
  | { kind: 'sync'; client: number };

/** An import of every instant of tubes 0..tubes-1, each with the value 0. */
export function fullImport(tubes: number): Operation {
  const rows = Array.from({ length: tubes * INSTANTS }, (_, i) => ({
    tube: Math.floor(i / INSTANTS),
    at: i % INSTANTS,
    value: 0,
  }));
  return { kind: 'import', withStatus: false, rows };
}

/**
 * Operations over tubes 0..tubes-1 (positions in the fixture's list) and clients 0..clients-1.
 * `correcting`: a full import of every instant first, then mostly status changes, removals and syncs,
 * so that many deltas hold corrections and no insert (which a delta reads by its own path).
 */
export function operations(
  tubes: number,
  clients: number,
  options: { compress?: boolean; correcting?: boolean } = {},
) {
  const tube = fc.integer({ min: 0, max: tubes - 1 });
  const at = fc.integer({ min: 0, max: INSTANTS - 1 });
  const span = fc.tuple(at, fc.integer({ min: 1, max: INSTANTS })).map(([from, length]) => ({
    from,
    to: Math.min(INSTANTS, from + length),
  }));
  const status = fc.integer({ min: 0, max: STATUSES.length - 1 });
  const importOp = fc.boolean().chain((withStatus) =>
    fc
      .uniqueArray(fc.record({ tube, at, value: fc.integer({ min: -3, max: 3 }), status }), {
        minLength: 1,
        maxLength: 8,
        selector: (r) => `${r.tube} ${r.at}`,
      })
      .map((rows) => ({
        kind: 'import' as const,
        withStatus,
        rows: rows.map((r) => (withStatus ? r : { tube: r.tube, at: r.at, value: r.value })),
      })),
  );
  const statusOp = fc
    .record({
      status,
      tubes: fc.oneof(fc.constant('all' as const), fc.uniqueArray(tube, { minLength: 1 })),
      span,
    })
    .map(({ status, tubes, span }) => ({ kind: 'status' as const, status, tubes, ...span }));
  const removeOp = fc
    .record({ tube, span })
    .map(({ tube, span }) => ({ kind: 'remove' as const, tube, ...span }));
  const syncOp = fc
    .integer({ min: 0, max: clients - 1 })
    .map((client) => ({ kind: 'sync' as const, client }));
  const { correcting = false } = options;
  const choices = [
    { arbitrary: importOp, weight: correcting ? 1 : 4 },
    { arbitrary: statusOp, weight: correcting ? 3 : 2 },
    { arbitrary: removeOp, weight: correcting ? 2 : 1 },
    { arbitrary: syncOp, weight: 4 },
    ...(options.compress ? [{ arbitrary: fc.constant({ kind: 'compress' as const }), weight: 1 }] : []),
  ];
  const ops = fc.array(fc.oneof(...choices), { minLength: 4, maxLength: 30 });
  if (!correcting) return ops;
  return ops.map((rest) => [fullImport(tubes), ...rest]);
}

/** What a client syncs: a status filter (codes; undefined for all), include=status, buckets. */
export interface ClientView {
  statuses?: number[];
  withStatus: boolean;
  aggregate: boolean;
}

export const CLIENT_VIEWS: ClientView[] = [
  { withStatus: false, aggregate: false },
  { withStatus: true, aggregate: false },
  { statuses: [0], withStatus: true, aggregate: false },
  { statuses: [0], withStatus: false, aggregate: false },
  { statuses: [0, 1], withStatus: true, aggregate: false },
  { statuses: [1, 2], withStatus: false, aggregate: false },
  { withStatus: false, aggregate: true },
  { statuses: [0], withStatus: false, aggregate: true },
];

/** A copy: `tube instant` → the row's text (value, and status or bucket numbers). */
export type Copy = Map<string, string>;

const passes = (view: ClientView, column: string) =>
  view.statuses ? `${column} = any('{${view.statuses.join(',')}}'::int2[])` : 'true';

/** A full pull of the view, in the transaction's snapshot. */
export async function fullPull(tx: Queryable, tubeIds: readonly number[], view: ClientView): Promise<Copy> {
  const copy: Copy = new Map();
  if (view.aggregate) {
    const buckets = bucketsOf(FROM, TO, BUCKET_SECONDS);
    const rows = await tx.unsafe<Record<string, unknown>[]>(`
      select (l.n - 1)::int4 as tube, ${buckets.columns}
      from unnest('{${tubeIds.join(',')}}'::int4[]) with ordinality l (id, n)
      cross join generate_series(0::int8, ${buckets.count} - 1) k
      ${buckets.perBucket('l.id', 'k', view.statuses && passes(view, 'status'))}
      where measured.count > 0`);
    for (const row of rows) copy.set(keyOf(row), bucketText(row));
    return copy;
  }
  const rows = await tx.unsafe<{ tube: number; observed_at: Date; value: number; status: number }[]>(`
    select l.n as tube, m.observed_at, measurement_value(m.value, m.value_thousandths) as value, m.status
    from unnest('{${tubeIds.join(',')}}'::int4[]) with ordinality l (id, n)
    join measurements m on m.tube_id = l.id
    where m.observed_at >= '${FROM}' and m.observed_at < '${TO}' and ${passes(view, 'm.status')}`);
  for (const row of rows) {
    copy.set(`${row.tube - 1} ${row.observed_at.toISOString()}`, rowText(view, row.value, row.status));
  }
  return copy;
}

const keyOf = (row: Record<string, unknown>) => `${row.tube} ${(row.observed_at as Date).toISOString()}`;
const bucketText = (row: Record<string, unknown>) => [row.value, row.min, row.max, row.count].join(' ');

const rowText = (view: ClientView, value: number, status: number) =>
  view.withStatus ? `${value} ${STATUSES[status]}` : `${value}`;

export interface Applied {
  refused: boolean;
  /** The keys the delta wrote (upserted or removed). */
  keys: string[];
}

/**
 * Applies the delta since `since` to `copy` as a client does: upsert every row, then delete the rows
 * marked removed; buckets replace buckets. A refusal (410) leaves the copy to a full pull.
 */
export async function applyDelta(
  tx: Queryable,
  tubeIds: readonly number[],
  view: ClientView,
  since: SyncPoint,
  copy: Copy,
): Promise<Applied> {
  const request = {
    tubeIds,
    from: FROM,
    to: TO,
    since,
    statuses: view.statuses,
    withStatus: view.withStatus,
    aggregate: view.aggregate ? { seconds: BUCKET_SECONDS } : undefined,
  };
  // As the network route reads a delta: only the parts of it that the change log holds since the token.
  const select = await deltaSelect(tx, request);
  // Read whole, as if the log held every part, it must be the same.
  const whole = (await deltaRefusal(tx, request)) ? undefined : changedMeasurementsSelect(request);
  if ((select === undefined) !== (whole === undefined)) {
    throw new Error(`the delta read in parts is ${select ? 'told' : 'refused'}, read whole it is not`);
  }
  if (select === undefined || whole === undefined) return { refused: true, keys: [] };
  const rows = await tx.unsafe<Record<string, unknown>[]>(select);
  const wholeRows = await tx.unsafe<Record<string, unknown>[]>(whole);
  if (JSON.stringify(rows) !== JSON.stringify(wholeRows)) {
    throw new Error(
      `the delta read in parts differs from the delta read whole: ${JSON.stringify({ rows, wholeRows })}`,
    );
  }
  const keys: string[] = [];
  const removed: string[] = [];
  for (const row of rows) {
    const key = keyOf(row);
    keys.push(key);
    if (view.aggregate) {
      copy.set(key, bucketText(row));
    } else if (view.withStatus && row.status === REMOVED_CODE) {
      removed.push(key);
    } else {
      copy.set(key, rowText(view, row.value as number, row.status as number));
    }
  }
  for (const key of removed) copy.delete(key);
  return { refused: false, keys };
}

type Of<K extends Operation['kind']> = Extract<Operation, { kind: K }>;

/** What writes the operations (test/helpers/correctionWriters.ts), over tube positions. */
export interface Writers {
  import(tubeIds: number[], op: Of<'import'>): Promise<void>;
  status(tubeIds: number[], op: Of<'status'>): Promise<void>;
  remove(tubeIds: number[], op: Of<'remove'>): Promise<void>;
  compress?: (() => Promise<void>) | undefined;
}

const TUBES = ['1b4e28ba-2fa1-11d2-883f-0016d3cca427', '1b4e28ba-2fa1-11d2-883f-0016d3cca428'];

/** Two tubes of two wells registered; their ids in list order. */
export async function registerTubes(sql: Sql): Promise<number[]> {
  await upsertRegistry(sql, [
    { name: 'W1', tubes: [{ identifier: TUBES[0]!, number: '1' }] },
    { name: 'W2', tubes: [{ identifier: TUBES[1]!, number: '1' }] },
  ]);
  const ids = await sql<{ id: number }[]>`select id from tubes order by identifier`;
  return ids.map((row) => row.id);
}

interface Client {
  since: SyncPoint;
  copy: Copy;
  /** Operations applied when the token was read: what changed after it starts there. */
  seen: number;
}

/** Runs `ops` against the database and the model; returns the first disagreement, or undefined. */
export async function runOperations(
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

/** Sync as the network endpoint runs it (src/sync/), for the tests of test/sync/. */
import type { Queryable, Sql } from '../../src/db/connect.js';
import { begin } from '../../src/db/transaction.js';
import type { BatchShape } from '../../src/engine/batch.js';
import { readBatches } from '../../src/engine/read/binaryCopy.js';
import {
  aggregateSelect,
  type BucketFunction,
  type Bucketing,
  shapeOf,
} from '../../src/engine/read/selects.js';
import {
  changedMeasurementsSelect,
  currentSyncPoint,
  type SyncViewer,
  syncGone,
} from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';

export const ALL: SyncViewer = { allTubes: true, grants: new Set() };

/** A response's transaction, as the network endpoint opens it. */
export const snapshotRead = <T>(sql: Sql, work: (tx: Sql) => Promise<T>) =>
  begin(sql, (tx) => work(tx as unknown as Sql), { snapshot: true });

/** The sync point of a response read now. */
export const point = (sql: Sql, viewer: SyncViewer = ALL) =>
  snapshotRead(sql, (tx) => currentSyncPoint(tx, viewer));

/** A row of the row source: numbers as the batch holds them, the time as Date's ISO text. */
export interface SourceRow {
  tube: number;
  observedAt: string;
  value: number;
  min?: number;
  max?: number;
  /** As PostgreSQL writes an int8. */
  count?: string;
}

/** Small, so that reads span several batches. */
const BATCH_ROWS = 100;

/** Epoch microseconds as ISO text; refused when Date's milliseconds would drop a digit. */
function isoText(micros: number): string {
  if (micros % 1000 !== 0) throw new Error(`sub-millisecond instant: ${micros}`);
  return new Date(micros / 1000).toISOString();
}

/** The rows of `select` through the response's row source (binary COPY into MeasurementBatches). */
export async function sourceRows(tx: Queryable, select: string, shape: BatchShape): Promise<SourceRow[]> {
  const rows: SourceRow[] = [];
  for await (const batch of readBatches(tx, select, shape, BATCH_ROWS)) {
    for (let i = 0; i < batch.length; i++) {
      const row: SourceRow = {
        tube: batch.tube[i]!,
        observedAt: isoText(batch.observedAt[i]!),
        value: batch.value[i]!,
      };
      if (batch.count) {
        row.min = batch.min![i]!;
        row.max = batch.max![i]!;
        row.count = String(batch.count[i]!);
      }
      rows.push(row);
    }
  }
  return rows;
}

/** A row as a line of Delta.rows: `tube observedAt value`, and aggregated ` min max count`. */
const line = (r: SourceRow) =>
  [r.tube, r.observedAt, r.value, ...(r.count === undefined ? [] : [r.min, r.max, r.count])].join(' ');

export interface Delta {
  gone: boolean;
  /** `tube observedAt value` (raw) or `tube bucket mean min max count` (aggregated). */
  rows: string[];
}

export interface DeltaOptions {
  viewer?: SyncViewer;
  from?: string;
  to?: string;
  aggregateSeconds?: number;
  bucketFunction?: BucketFunction;
}

/** An aggregated series' bucket (wholeBuckets) as a line of Delta.rows, at tube position `tube`. */
export const bucketLine = (tube: number, b: SourceRow) => line({ ...b, tube });

/** The buckets of a whole aggregated series, as the series endpoint reads them. */
export const wholeBuckets = (sql: Sql, tubeId: number, from: string, to: string, bucketing: Bucketing) =>
  snapshotRead(sql, async (tx) =>
    sourceRows(tx, await aggregateSelect(tx, tubeId, from, to, bucketing), 'aggregated'),
  );

/** What a response with changedSince holds: 410, or its rows, for tubes `tubeIds` in [from, to). */
export function syncDelta(
  sql: Sql,
  since: SyncPoint,
  tubeIds: number[],
  options: DeltaOptions & { from: string; to: string },
): Promise<Delta> {
  return snapshotRead(sql, async (tx) => {
    const now = await currentSyncPoint(tx, options.viewer ?? ALL);
    if (await syncGone(tx, since, now)) return { gone: true, rows: [] };
    const aggregate = options.aggregateSeconds
      ? { bucketFunction: options.bucketFunction ?? 'date_bin', seconds: options.aggregateSeconds }
      : undefined;
    const select = changedMeasurementsSelect({
      tubeIds,
      from: options.from,
      to: options.to,
      since,
      aggregate,
    });
    return { gone: false, rows: (await sourceRows(tx, select, shapeOf(aggregate))).map(line) };
  });
}

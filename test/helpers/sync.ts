/** Sync as the bulk endpoint runs it (src/v1/sync/), for the tests of test/v1/sync/. */
import type { Sql } from '../../src/db/connect.js';
import { aggregateSelect, type BucketFunction, type Bucketing } from '../../src/v1/measurements/sql.js';
import {
  changedMeasurementsSelect,
  currentSyncPoint,
  type SyncViewer,
  syncGone,
} from '../../src/v1/sync/sql.js';
import type { SyncPoint } from '../../src/v1/sync/token.js';

export const ALL: SyncViewer = { allTubes: true, grants: new Set() };

/** A response's transaction, as the bulk endpoint opens it. */
export const snapshotRead = <T>(sql: Sql, work: (tx: Sql) => Promise<T>) =>
  sql.begin('isolation level repeatable read read only', (tx) => work(tx as unknown as Sql)) as Promise<T>;

/** The sync point of a response read now. */
export const point = (sql: Sql, viewer: SyncViewer = ALL) =>
  snapshotRead(sql, (tx) => currentSyncPoint(tx, viewer));

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

/** A bucket as the row source's select gives it (aggregateSelect): count is an int8, as text. */
export interface BucketRow {
  observed_at: Date;
  value: number;
  min: number;
  max: number;
  count: string;
}

/** An aggregated series' bucket (aggregateSelect) as a line of Delta.rows, at tube position `tube`. */
export const bucketLine = (tube: number, b: BucketRow) =>
  `${tube} ${b.observed_at.toISOString()} ${b.value} ${b.min} ${b.max} ${b.count}`;

/** The buckets of a whole aggregated series, as the series endpoint reads them. */
export const wholeBuckets = async (
  sql: Sql,
  tubeId: number,
  from: string,
  to: string,
  bucketing: Bucketing,
) => [...(await sql.unsafe<BucketRow[]>(aggregateSelect(tubeId, from, to, bucketing)))];

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
    const found = await tx.unsafe(
      changedMeasurementsSelect({ tubeIds, from: options.from, to: options.to, since, aggregate }),
    );
    return {
      gone: false,
      rows: found.map((r) =>
        [
          r.tube,
          (r.observed_at as Date).toISOString(),
          r.value,
          ...(aggregate ? [r.min, r.max, r.count] : []),
        ].join(' '),
      ),
    };
  });
}

/**
 * Measurements in columns: what the read side makes (read/binaryCopy.ts) and every format writes
 * (write/). No time or number is printed as text on the server and parsed back here.
 */
import { parseInstant } from '../domain/datetime.js';
import { DELTA_STATUSES } from './schemas.js';

export interface MeasurementBatch {
  length: number;
  /** Position of each row's tube in the response's tube list (0 for the series endpoint). */
  tube: Int32Array;
  /** Microseconds since 1970-01-01T00:00:00Z: exact as a double (|t| < 2^53). */
  observedAt: Float64Array;
  /** Raw: the value; aggregated: the mean. */
  value: Float64Array;
  /** Aggregated only: the bucket's lowest and highest value and how many measurements it holds. */
  min?: Float64Array;
  max?: Float64Array;
  count?: Float64Array;
  /**
   * With the status only (`include=status`): each row's status code, an index into DELTA_STATUSES
   * (src/engine/schemas.ts), so 3 is a delta's `removed`.
   */
  status?: Int8Array;
}

/**
 * The columns a select feeding the source returns, in this order: tube, observed_at, value, then
 * min, max and count (aggregated) or status (rawWithStatus).
 */
export type BatchShape = 'raw' | 'aggregated' | 'rawWithStatus';

export function emptyBatch(shape: BatchShape, capacity: number): MeasurementBatch {
  const batch: MeasurementBatch = {
    length: 0,
    tube: new Int32Array(capacity),
    observedAt: new Float64Array(capacity),
    value: new Float64Array(capacity),
  };
  if (shape === 'aggregated') {
    batch.min = new Float64Array(capacity);
    batch.max = new Float64Array(capacity);
    batch.count = new Float64Array(capacity);
  }
  if (shape === 'rawWithStatus') batch.status = new Int8Array(capacity);
  return batch;
}

/** Rows `start` to `end` (exclusive) of `batch` as views (no copy): one tube's rows of a batch, say. */
export function rowsBetween(batch: MeasurementBatch, start: number, end: number): MeasurementBatch {
  if (start === 0 && end === batch.tube.length) return batch;
  const view = (column: Float64Array | undefined) => column?.subarray(start, end);
  return {
    length: end - start,
    tube: batch.tube.subarray(start, end),
    observedAt: batch.observedAt.subarray(start, end),
    value: batch.value.subarray(start, end),
    ...(batch.min && { min: view(batch.min)!, max: view(batch.max)!, count: view(batch.count)! }),
    ...(batch.status && { status: batch.status.subarray(start, end) }),
  };
}

/** A measurement as a test or an example writes it: an RFC 3339 instant and numbers. */
export interface MeasurementValues {
  observedAt: string;
  value: number;
  min?: number;
  max?: number;
  count?: number;
  status?: (typeof DELTA_STATUSES)[number];
}

/**
 * A batch of the given rows (aggregated when the first has a count, with the status when it has one):
 * for examples and tests.
 */
export function batchOf(rows: readonly MeasurementValues[]): MeasurementBatch {
  const first = rows[0];
  const shape =
    first?.count !== undefined ? 'aggregated' : first?.status !== undefined ? 'rawWithStatus' : 'raw';
  const batch = emptyBatch(shape, rows.length);
  rows.forEach((row, i) => {
    const { seconds, micros } = parseInstant(row.observedAt);
    batch.observedAt[i] = seconds * 1_000_000 + micros;
    batch.value[i] = row.value;
    if (batch.count) {
      batch.min![i] = row.min!;
      batch.max![i] = row.max!;
      batch.count[i] = row.count!;
    }
    if (batch.status) batch.status[i] = DELTA_STATUSES.indexOf(row.status!);
  });
  batch.length = rows.length;
  return batch;
}

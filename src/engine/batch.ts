/**
 * Measurements in columns, as every representation (JSON, CSV, Arrow) reads them, and the decoder that
 * makes them from PostgreSQL's binary COPY output (https://www.postgresql.org/docs/current/sql-copy.html,
 * "Binary Format"): no time or number is printed as text on the server and parsed back here.
 */
import { parseDateTime } from '../domain/datetime.js';

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
}

/** The columns a select feeding the source returns, in this order (see PLAN: tube, time, value, …). */
export type BatchShape = 'raw' | 'aggregated';

const FIELDS: Record<BatchShape, number> = { raw: 3, aggregated: 6 };

/** `PGCOPY\n\377\r\n\0`: the start of every binary COPY. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Signature, flags (int32), header extension length (int32). */
const HEADER_BYTES = SIGNATURE.length + 8;

/** PostgreSQL's timestamps count from 2000-01-01T00:00:00Z; ours from 1970. */
const POSTGRES_EPOCH_MICROS = 946_684_800_000_000;
const TWO_TO_32 = 4_294_967_296;
/** High words of the int64s whose value, moved to 1970, stays within a double's exact integers. */
const HIGH_WORD_LIMIT = 2 ** 21 - 2 ** 18;

/** Bytes of one row: field count, then per field its length and value. */
const ROW_BYTES: Record<BatchShape, number> = {
  raw: 2 + (4 + 4) + (4 + 8) + (4 + 8),
  aggregated: 2 + (4 + 4) + (4 + 8) + (4 + 8) + 3 * (4 + 8),
};

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
  };
}

/** A measurement as a test or an example writes it: an RFC 3339 instant and numbers. */
export interface MeasurementValues {
  observedAt: string;
  value: number;
  min?: number;
  max?: number;
  count?: number;
}

/** A batch of the given rows (aggregated when the first has a count): for examples and tests. */
export function batchOf(rows: readonly MeasurementValues[]): MeasurementBatch {
  const batch = emptyBatch(rows[0]?.count === undefined ? 'raw' : 'aggregated', rows.length);
  rows.forEach((row, i) => {
    const parsed = parseDateTime(row.observedAt);
    if (!parsed.ok) throw new Error(`${row.observedAt}: ${parsed.reason}`);
    batch.observedAt[i] = parsed.instant.seconds * 1_000_000 + parsed.instant.micros;
    batch.value[i] = row.value;
    if (batch.count) {
      batch.min![i] = row.min!;
      batch.max![i] = row.max!;
      batch.count[i] = row.count!;
    }
  });
  batch.length = rows.length;
  return batch;
}

const malformed = (what: string) => new Error(`binary COPY output: ${what}`);

/**
 * Decodes binary COPY output, chunk by chunk as it arrives (a chunk may end anywhere), into batches of
 * `capacity` rows. `write` hands each batch that filled up to `onBatch`; `end` checks that the trailer
 * came and hands the last, partial batch. A stream without its trailer is an error, never a short series.
 */
export class CopyBinaryDecoder {
  private batch: MeasurementBatch;
  private leftover: Buffer | undefined;
  private headerSeen = false;
  private trailerSeen = false;
  private readonly fields: number;
  private readonly rowBytes: number;

  constructor(
    private readonly shape: BatchShape,
    private readonly capacity: number,
    private readonly onBatch: (batch: MeasurementBatch) => void,
  ) {
    this.fields = FIELDS[shape];
    this.rowBytes = ROW_BYTES[shape];
    this.batch = emptyBatch(shape, capacity);
  }

  write(chunk: Buffer): void {
    let data = chunk;
    if (this.leftover) {
      data = Buffer.concat([this.leftover, chunk]);
      this.leftover = undefined;
    }
    let at = 0;
    if (!this.headerSeen) {
      if (data.length < HEADER_BYTES) {
        this.leftover = data;
        return;
      }
      if (!data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw malformed('no signature');
      const extension = data.readInt32BE(SIGNATURE.length + 4);
      if (data.length < HEADER_BYTES + extension) {
        this.leftover = data;
        return;
      }
      at = HEADER_BYTES + extension;
      this.headerSeen = true;
    }
    const end = data.length;
    while (at + 2 <= end) {
      if (this.trailerSeen) throw malformed('data after the trailer');
      const fields = data.readInt16BE(at);
      if (fields === -1) {
        this.trailerSeen = true;
        at += 2;
        continue;
      }
      if (fields !== this.fields) throw malformed(`${fields} fields where ${this.fields} were expected`);
      if (at + this.rowBytes > end) break;
      this.row(data, at + 2);
      at += this.rowBytes;
    }
    if (at < end) this.leftover = data.subarray(at);
  }

  /** One row's fields from `at` (after the field count); every length is checked, so NULL is refused. */
  private row(data: Buffer, at: number): void {
    const batch = this.batch;
    const i = batch.length;
    if (data.readInt32BE(at) !== 4 || data.readInt32BE(at + 8) !== 8 || data.readInt32BE(at + 20) !== 8) {
      throw malformed('a field of the wrong width (or NULL)');
    }
    batch.tube[i] = data.readInt32BE(at + 4);
    const high = data.readInt32BE(at + 12);
    // Some 250 years from 2000 and more, a double would round the instant: refused, never rounded.
    if (high >= HIGH_WORD_LIMIT || high < -HIGH_WORD_LIMIT)
      throw malformed('an instant a double cannot hold');
    batch.observedAt[i] = high * TWO_TO_32 + data.readUInt32BE(at + 16) + POSTGRES_EPOCH_MICROS;
    // + 0 reads -0 as 0, as the JSON writes it: every format then carries the same double.
    batch.value[i] = data.readDoubleBE(at + 24) + 0;
    if (this.shape === 'aggregated') {
      if (
        data.readInt32BE(at + 32) !== 8 ||
        data.readInt32BE(at + 44) !== 8 ||
        data.readInt32BE(at + 56) !== 8
      ) {
        throw malformed('a field of the wrong width (or NULL)');
      }
      batch.min![i] = data.readDoubleBE(at + 36) + 0;
      batch.max![i] = data.readDoubleBE(at + 48) + 0;
      batch.count![i] = data.readInt32BE(at + 60) * TWO_TO_32 + data.readUInt32BE(at + 64);
    }
    batch.length = i + 1;
    if (batch.length === this.capacity) {
      this.batch = emptyBatch(this.shape, this.capacity);
      this.onBatch(batch);
    }
  }

  /** The output is over: the last rows, once the trailer is known to have come. */
  end(): void {
    if (!this.headerSeen || !this.trailerSeen || this.leftover) throw malformed('cut off before its trailer');
    if (this.batch.length > 0) this.onBatch(rowsBetween(this.batch, 0, this.batch.length));
  }
}

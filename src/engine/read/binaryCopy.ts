/**
 * The driver glue of the read side: the rows of a select as MeasurementBatches, from PostgreSQL's
 * binary COPY output (https://www.postgresql.org/docs/current/sql-copy.html, "Binary Format"), decoded
 * as postgres.js hands it over. Everything that knows postgres.js's stream internals is here.
 */
import type { Queryable } from '../../db/connect.js';
import { type BatchShape, emptyBatch, type MeasurementBatch, rowsBetween } from '../batch.js';
import { DELTA_STATUSES } from '../schemas.js';

const FIELDS: Record<BatchShape, number> = { raw: 3, aggregated: 6, rawWithStatus: 4 };

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
  rawWithStatus: 2 + (4 + 4) + (4 + 8) + (4 + 8) + (4 + 2),
};

/** The largest status code a row may carry: a delta's `removed` (DELTA_STATUSES). */
const MOST_STATUS_CODE = DELTA_STATUSES.length - 1;

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
    } else if (this.shape === 'rawWithStatus') {
      if (data.readInt32BE(at + 32) !== 2) throw malformed('a field of the wrong width (or NULL)');
      const status = data.readInt16BE(at + 36);
      // Every writer indexes its names by the code: one it does not know is refused, not written.
      if (status < 0 || status > MOST_STATUS_CODE) throw malformed(`an unknown status code ${status}`);
      batch.status![i] = status;
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

/** Decoded batches waiting for the caller at most: the rest waits in the socket, holding back the server. */
const BATCHES_AHEAD = 2;

/**
 * The stream postgres.js hands out for `COPY … TO STDOUT`: it calls `push` with each CopyData message's
 * bytes (one row each), pauses its socket when `push` returns false, resumes it in `_read`, and ends
 * the stream with `push(null)`.
 */
interface CopyOutput {
  push(chunk: Buffer | null): boolean;
  _read(size: number): void;
  read(): Buffer | null;
  once(event: 'error' | 'end', listener: (error?: unknown) => void): unknown;
}

/**
 * The rows of `select` (selects.ts, or any select of the same columns) as
 * MeasurementBatches of `batchSize` rows, from `COPY (select) TO STDOUT (FORMAT binary)` on `tx`.
 * Must run in a transaction (the snapshot).
 *
 * The rows are decoded as postgres.js hands them over, through the output stream's own `push`: a
 * stream event per row would cost more than decoding it (docs/decisions/0001-row-source-binary-copy.md).
 * `push` answers false while BATCHES_AHEAD batches wait, which pauses the socket, so a slow consumer holds
 * back the database; taking a batch resumes it.
 *
 * When the caller stops early, the COPY is cancelled and the rest of its output dropped, so the
 * connection is idle in the transaction again by the time this generator has returned. An output
 * without its trailer (a lost connection can end the stream early) is an error, never a short series.
 */
export async function* readBatches(
  tx: Queryable,
  select: string,
  shape: BatchShape,
  batchSize: number,
): AsyncGenerator<MeasurementBatch> {
  const query = tx.unsafe(`copy (${select}) to stdout (format binary)`);
  const output = (await query.readable()) as unknown as CopyOutput;
  const waiting: MeasurementBatch[] = [];
  let failure: { error: unknown } | undefined;
  let ended = false;
  let dropping = false;
  let paused = false;
  let wake: (() => void) | undefined;
  const decoder = new CopyBinaryDecoder(shape, batchSize, (batch) => {
    waiting.push(batch);
    wake?.();
  });
  const fail = (error: unknown) => {
    failure ??= { error };
    wake?.();
  };
  // The COPY is over once its output ended or failed: only then may the transaction send anything.
  let outputOver!: () => void;
  const over = new Promise<void>((resolve) => {
    outputOver = resolve;
  });
  /** Lets postgres.js read its socket again (its `_read`); nothing to do once the connection is gone. */
  const resume = () => {
    paused = false;
    try {
      output._read(0);
    } catch {
      // The connection is gone, and its loss reaches the query.
    }
  };
  const end = () => {
    if (ended || dropping || failure) return;
    try {
      decoder.end();
      ended = true;
    } catch (error) {
      fail(error);
    }
    wake?.();
    // The COPY's last messages (its completion) may wait behind a paused socket.
    if (paused) resume();
  };
  output.push = (chunk) => {
    if (chunk === null) {
      outputOver();
      end();
      return false;
    }
    if (dropping || failure) return true;
    try {
      decoder.write(chunk);
    } catch (error) {
      fail(error);
      return true;
    }
    paused = waiting.length >= BATCHES_AHEAD;
    return !paused;
  };
  output.once('error', (error) => {
    outputOver();
    fail(error);
  });
  // What arrived with the COPY's start (all of a short one, its end too) went through the stream's
  // own push before this one took over: read from the stream, whose end then comes as its event.
  output.once('end', () => {
    outputOver();
    end();
  });
  for (let early = output.read(); early !== null; early = output.read()) output.push(early);
  try {
    while (true) {
      if (failure) throw failure.error;
      const batch = waiting.shift();
      if (batch) {
        if (paused && waiting.length < BATCHES_AHEAD) resume();
        yield batch;
      } else if (ended) {
        return;
      } else {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    }
  } finally {
    if (!ended) {
      // Stopped early (or the output was malformed): the rest is dropped as it comes, until the
      // cancelled COPY ends either way.
      dropping = true;
      resume();
      // Delivered before the transaction goes on: a cancel that arrived later could hit a statement
      // of the next request on this connection. One that finds the COPY over is ignored (idle backend).
      const cancelled = Promise.resolve(query.cancel()).catch(() => {});
      await over;
      await cancelled;
    }
  }
}

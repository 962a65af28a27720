/**
 * PostgreSQL's binary COPY format (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4).
 * Binary rows cost the server no text parsing at all, and values arrive exactly as Node checked them:
 * the double Node computed, the microsecond Node parsed.
 */
import type { Instant } from '../../../domain/datetime.js';

/** Signature, flags (none), header extension length (none). */
export const COPY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);

/** A field count of -1 ends the data. */
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);

const TWO_32 = 4_294_967_296;

/** Writes an integer of up to 2^53 in magnitude as a big-endian int64. */
export function writeInt64(target: DataView, offset: number, value: number): void {
  const high = Math.floor(value / TWO_32);
  target.setInt32(offset, high);
  target.setUint32(offset + 4, value - high * TWO_32);
}

/** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix seconds. */
const POSTGRES_EPOCH = 946_684_800;
/** Seconds from the PostgreSQL epoch whose microseconds a double still holds exactly (±285 years). */
const EXACT_SECONDS = 9_007_199_254;

/** timestamptz: microseconds since 2000-01-01 UTC as an int64. */
function writeTimestamp(target: DataView, offset: number, instant: Instant): void {
  const seconds = instant.seconds - POSTGRES_EPOCH;
  if (seconds > -EXACT_SECONDS && seconds < EXACT_SECONDS) {
    writeInt64(target, offset, seconds * 1_000_000 + instant.micros);
  } else {
    target.setBigInt64(offset, BigInt(seconds) * 1_000_000n + BigInt(instant.micros));
  }
}

/** Bytes of the fields `writeMeasurement` writes with a value; 8 fewer with a null one. */
export const MEASUREMENT_BYTES = 4 + 8 + (4 + 8) + (4 + 2);

/** A null field: a length of -1 and no bytes. */
export const NULL_FIELD_BYTES = 4;

/**
 * The fields every row of a measurement ends in, each with its length: observed_at, value (null: a null
 * field), status. Returns the offset after them.
 */
export function writeMeasurement(
  target: DataView,
  offset: number,
  instant: Instant,
  value: number | null,
  status: number,
): number {
  target.setInt32(offset, 8);
  writeTimestamp(target, offset + 4, instant);
  let at = offset + 12;
  if (value === null) {
    target.setInt32(at, -1);
    at += NULL_FIELD_BYTES;
  } else {
    target.setInt32(at, 8);
    target.setFloat64(at + 4, value);
    at += 12;
  }
  target.setInt32(at, 2);
  target.setInt16(at + 4, status);
  return at + 6;
}

/** The largest magnitude whose thousandths fit an int4. */
const MAX_THOUSANDTHS_VALUE = 2_147_483.647;

/**
 * sql/016's `measurement_thousandths`, the one encoder, in JavaScript for the binary COPY: the
 * thousandths of a value that has at most three places (their division by 1000 is the very same
 * double) and fits an int4, else undefined; of the zeros only +0. `Math.round` and SQL's `round` differ
 * only at a half, which never divides back to the value.
 */
export function measurementThousandths(value: number): number | undefined {
  if (value === 0) return Object.is(value, 0) ? 0 : undefined;
  if (!(Math.abs(value) <= MAX_THOUSANDTHS_VALUE)) return undefined;
  const thousandths = Math.round(value * 1000);
  return thousandths / 1000 === value ? thousandths : undefined;
}

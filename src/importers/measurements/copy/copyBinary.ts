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
export function writeInt64(target: Buffer, offset: number, value: number): void {
  const high = Math.floor(value / TWO_32);
  target.writeInt32BE(high, offset);
  target.writeUInt32BE(value - high * TWO_32, offset + 4);
}

/** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix seconds. */
const POSTGRES_EPOCH = 946_684_800;
/** Seconds from the PostgreSQL epoch whose microseconds a double still holds exactly (±285 years). */
const EXACT_SECONDS = 9_007_199_254;

/** timestamptz: microseconds since 2000-01-01 UTC as an int64. */
export function writeTimestamp(target: Buffer, offset: number, instant: Instant): void {
  const seconds = instant.seconds - POSTGRES_EPOCH;
  if (seconds > -EXACT_SECONDS && seconds < EXACT_SECONDS) {
    writeInt64(target, offset, seconds * 1_000_000 + instant.micros);
  } else {
    target.writeBigInt64BE(BigInt(seconds) * 1_000_000n + BigInt(instant.micros), offset);
  }
}

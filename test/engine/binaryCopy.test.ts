/**
 * The binary COPY decoder on rows with their status: PostgreSQL's binary format written here by hand
 * (signature, header, rows of tube int4, observed_at int8, value float8, status int2, trailer), split
 * into chunks anywhere, decoded into the same batches; and refused, never guessed, where a status is
 * NULL, of another width, or a code no writer names.
 */
import fc from 'fast-check';
import t from 'tap';
import type { MeasurementBatch } from '../../src/engine/batch.js';
import { CopyBinaryDecoder } from '../../src/engine/read/binaryCopy.js';
import { DELTA_STATUSES } from '../../src/engine/schemas.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const POSTGRES_EPOCH_MICROS = 946_684_800_000_000n;

interface Row {
  tube: number;
  micros: bigint;
  value: number;
  status: number;
}

const int = (bytes: number, write: (buffer: Buffer) => void) => {
  const buffer = Buffer.alloc(bytes);
  write(buffer);
  return buffer;
};
const field = (value: Buffer | null) =>
  value === null
    ? int(4, (b) => b.writeInt32BE(-1))
    : Buffer.concat([int(4, (b) => b.writeInt32BE(value.length)), value]);

/** A row with its status field as given (an int2, another width, or NULL). */
const rowBytes = (row: Row, status: Buffer | null = int(2, (b) => b.writeInt16BE(row.status))) =>
  Buffer.concat([
    int(2, (b) => b.writeInt16BE(4)),
    field(int(4, (b) => b.writeInt32BE(row.tube))),
    field(int(8, (b) => b.writeBigInt64BE(row.micros - POSTGRES_EPOCH_MICROS))),
    field(int(8, (b) => b.writeDoubleBE(row.value))),
    field(status),
  ]);

const copyOutput = (rows: Buffer[]) =>
  Buffer.concat([SIGNATURE, Buffer.alloc(8), ...rows, int(2, (b) => b.writeInt16BE(-1))]);

/** The rows of `bytes` fed in chunks ending at `cuts`, in batches of `capacity`. */
function decode(bytes: Buffer, cuts: number[], capacity: number): MeasurementBatch[] {
  const batches: MeasurementBatch[] = [];
  const decoder = new CopyBinaryDecoder('rawWithStatus', capacity, (batch) => batches.push(batch));
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length]) {
    decoder.write(bytes.subarray(at, cut));
    at = cut;
  }
  decoder.end();
  return batches;
}

const rowArb = fc.record({
  tube: fc.integer({ min: 0, max: 199 }),
  micros: fc.bigInt({ min: -(2n ** 52n), max: 2n ** 52n }),
  value: fc.double({ noNaN: true, noDefaultInfinity: true }),
  status: fc.integer({ min: 0, max: DELTA_STATUSES.length - 1 }),
});

t.test('rows with their status, cut anywhere, decode to the same batches', async (t) => {
  fc.assert(
    fc.property(
      fc.array(rowArb, { maxLength: 40 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.integer({ min: 1, max: 9 }),
      (rows, cuts, capacity) => {
        const batches = decode(copyOutput(rows.map((row) => rowBytes(row))), cuts, capacity);
        const decoded = batches.flatMap((batch) =>
          Array.from({ length: batch.length }, (_, i) => ({
            tube: batch.tube[i],
            micros: BigInt(batch.observedAt[i]!),
            value: batch.value[i],
            status: batch.status![i],
          })),
        );
        // -0 is read as 0, as every format writes it.
        const expected = rows.map((row) => ({ ...row, value: row.value + 0 }));
        return (
          batches.every((batch) => batch.length <= capacity) &&
          JSON.stringify(decoded, (_, v) => (typeof v === 'bigint' ? String(v) : v)) ===
            JSON.stringify(expected, (_, v) => (typeof v === 'bigint' ? String(v) : v))
        );
      },
    ),
    { numRuns: 300 },
  );
  t.pass('300 cases');
});

t.test('a status that is NULL, of another width or unknown is refused', async (t) => {
  const row: Row = { tube: 0, micros: 1_704_067_200_000_000n, value: -1.23, status: 0 };
  const refused = (status: Buffer | null) => copyOutput([rowBytes(row, status)]);
  t.throws(() => decode(refused(null), [], 4), /wrong width \(or NULL\)/);
  t.throws(() => decode(refused(int(4, (b) => b.writeInt32BE(1))), [], 4), /fields where|wrong width/);
  t.throws(
    () => decode(refused(int(2, (b) => b.writeInt16BE(DELTA_STATUSES.length))), [], 4),
    /unknown status/,
  );
  t.throws(() => decode(refused(int(2, (b) => b.writeInt16BE(-1))), [], 4), /unknown status/);
  t.same(
    [...decode(refused(int(2, (b) => b.writeInt16BE(3))), [], 4)[0]!.status!],
    [3],
    'a removal (3) is read as it is',
  );
});

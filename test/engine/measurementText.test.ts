/**
 * Times and numbers written from a batch's numbers: the string forms against references written
 * independently (Date's calendar via test/helpers/dateTimes.ts, JSON.stringify), and the byte writer
 * of the JSON and CSV against the string forms, for any instant and any double.
 */
import fc from 'fast-check';
import t from 'tap';
import { instantOfMicros } from '../../src/domain/datetime.js';
import { AsciiWriter, instantText, numberText } from '../../src/engine/write/text.js';
import { utcText } from '../helpers/dateTimes.js';

/** Microseconds a double holds exactly that the decoder lets through (some 250 years from 2000). */
const LIMIT = 2 ** 53 - 1_000_000_000_000_000;
const microsArb = fc.oneof(
  fc.integer({ min: -LIMIT, max: LIMIT }),
  // Around midnights and whole seconds, where a rounded quotient could pick the wrong day or second.
  fc
    .tuple(fc.integer({ min: -80_000, max: 80_000 }), fc.integer({ min: -2, max: 2 }))
    .map(([day, off]) => day * 86_400_000_000 + off),
  fc.constantFrom(0, -1, 1, 946_684_800_000_000, 1_704_067_200_000_000),
);

const written = (write: (writer: AsciiWriter) => void) => {
  const writer = new AsciiWriter(8);
  writer.reserve(64);
  write(writer);
  return writer.take().toString('latin1');
};

t.test('instants: RFC 3339 UTC, the fraction only when not zero', async (t) => {
  fc.assert(
    fc.property(microsArb, (micros) => {
      const expected = utcText(instantOfMicros(micros));
      return instantText(micros) === expected && written((w) => w.instant(micros)) === expected;
    }),
    { numRuns: 20_000 },
  );
  t.equal(instantText(1_704_067_200_500_000), '2024-01-01T00:00:00.5Z');
  t.equal(instantText(-1), '1969-12-31T23:59:59.999999Z');
});

/** Decimals as imports store them (up to 15 significant digits, any scale), and any double at all. */
const doubleArb = fc.oneof(
  fc
    .tuple(fc.integer({ min: -999_999_999, max: 999_999_999 }), fc.integer({ min: 0, max: 9 }))
    .map(([digits, scale]) => digits / 10 ** scale),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, 1e-6, -1e-6, 1e-7, 0.1 + 0.2, 1e15, 1e21, 999_999_999.999999, 123456789.123456),
);

t.test('numbers: the shortest text that reads back, as JSON.stringify writes it', async (t) => {
  fc.assert(
    fc.property(doubleArb, (value) => {
      const expected = JSON.stringify(value);
      return numberText(value) === expected && written((w) => w.number(value)) === expected;
    }),
    { numRuns: 50_000 },
  );
  t.equal(
    written((w) => w.number(-0)),
    '0',
  );
  t.equal(
    written((w) => w.number(Number.POSITIVE_INFINITY)),
    'null',
  );
  t.throws(() => numberText(Number.NaN));
  t.throws(() => written((w) => w.number(Number.NaN)));
});

t.test('the writer grows past its scratch and hands out each batch on its own', async (t) => {
  const writer = new AsciiWriter(16);
  const many = Array.from({ length: 10_000 }, (_, i) => i / 8);
  writer.reserve(many.length * 26);
  for (const value of many) {
    writer.number(value);
    writer.bytes(Buffer.from(','));
  }
  const first = writer.take();
  writer.reserve(8);
  writer.number(1.5);
  t.equal(writer.take().toString(), '1.5');
  t.equal(first.toString(), `${many.map((value) => JSON.stringify(value)).join(',')},`);
});

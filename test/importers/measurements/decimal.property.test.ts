/**
 * The import's reading of a value inside a CSV line (readDecimal, which computes the common case
 * itself) gives what parseDecimal gives for the value alone, to the bit: the same double, the same
 * sign of zero, and NaN for the same refused texts.
 */
import fc from 'fast-check';
import t from 'tap';
import { parseDecimal, readDecimal } from '../../../src/importers/measurements/csv/decimal.js';

const RUNS = { numRuns: 50_000 };

/** Decimals as loggers write them, and near misses: long, signed, exponents, stray characters. */
const decimalText = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', '+', '-'),
      fc.stringMatching(/^[0-9]{0,18}$/),
      fc.stringMatching(/^[0-9]{0,18}$/),
    )
    .map(([sign, whole, fraction]) => `${sign}${whole}.${fraction}`),
  fc
    .tuple(fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,18}$/))
    .map(([sign, digits]) => `${sign}${digits}`),
  fc.double({ noNaN: true }).map((value) => String(value)),
  fc
    .double({ min: -1e4, max: 1e4, noNaN: true })
    .chain((value) => fc.integer({ min: 0, max: 17 }).map((digits) => value.toFixed(digits))),
  fc.stringMatching(/^[0-9.+\-eE ]{0,20}$/),
);

t.test('readDecimal of a value inside a line is parseDecimal of the value alone', async (t) => {
  const lineSide = fc.stringMatching(/^[0-9.+\-,]{0,6}$/);
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(decimalText, lineSide, lineSide, (text, before, after) => {
      const expected = parseDecimal(text);
      if (Number.isNaN(expected)) refused++;
      else accepted++;
      const line = `${before}${text}${after}`;
      return Object.is(readDecimal(line, before.length, before.length + text.length), expected);
    }),
    RUNS,
  );
  t.ok(accepted > 10_000 && refused > 5_000, `${accepted} accepted and ${refused} refused alike`);
});

/**
 * Measurement values: decimal numbers as the CSV states them. The column is double precision, which
 * holds every decimal of up to 15 significant digits exactly in the sense that it reads back as the same
 * decimal; more digits would be rounded without a word, so they are refused instead.
 */

export const MAX_SIGNIFICANT_DIGITS = 15;

/** Smallest normal double: below it precision is lost gradually (subnormals), then entirely (zero). */
const SMALLEST_NORMAL = 2.2250738585072014e-308;

const EMPTY = -1;
const MALFORMED = -2;

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * One pass checks the grammar `[+-]digits[.digits][(e|E)[+-]digits]` and counts the significant digits
 * (from the first to the last non-zero digit of the mantissa). Returns that count, or EMPTY / MALFORMED.
 */
function scanDecimal(text: string): number {
  const length = text.length;
  if (length === 0) return EMPTY;
  let i = 0;
  let code = text.charCodeAt(0);
  if (code === 43 /* + */ || code === 45 /* - */) i++;
  let digits = 0;
  let firstNonZero = -1;
  let lastNonZero = -1;
  let seenPoint = false;
  for (; i < length; i++) {
    code = text.charCodeAt(i);
    if (isDigit(code)) {
      if (code !== 48) {
        if (firstNonZero < 0) firstNonZero = digits;
        lastNonZero = digits;
      }
      digits++;
    } else if (code === 46 /* . */ && !seenPoint) {
      seenPoint = true;
    } else break;
  }
  if (digits === 0) return MALFORMED;
  if (i < length) {
    if (code !== 101 /* e */ && code !== 69 /* E */) return MALFORMED;
    i++;
    code = text.charCodeAt(i);
    if (code === 43 || code === 45) i++;
    if (i === length) return MALFORMED;
    for (; i < length; i++) if (!isDigit(text.charCodeAt(i))) return MALFORMED;
  }
  return firstNonZero < 0 ? 0 : lastNonZero - firstNonZero + 1;
}

/** Number() is correctly rounded, exactly like PostgreSQL's float8 input. */
function inRange(value: number, significant: number): boolean {
  return Number.isFinite(value) && (value !== 0 ? Math.abs(value) >= SMALLEST_NORMAL : significant === 0);
}

/**
 * The value of an acceptable decimal, or NaN (never a valid measurement) when it is not; then
 * `decimalProblem` says why. Returning a plain number keeps the per-row path free of allocations.
 */
export function parseDecimal(text: string): number {
  const significant = scanDecimal(text);
  if (significant < 0 || significant > MAX_SIGNIFICANT_DIGITS) return Number.NaN;
  const value = Number(text);
  return inRange(value, significant) ? value : Number.NaN;
}

/**
 * A decimal of any number of significant digits as the nearest double, or NaN when it is not one: for
 * the field's files, whose binary artefacts (`0.6709999999999999`) an importer rounds (roundLevel).
 */
export function parseLongDecimal(text: string): number {
  const significant = scanDecimal(text);
  if (significant < 0) return Number.NaN;
  const value = Number(text);
  return inRange(value, significant) ? value : Number.NaN;
}

/** 10^k, each exactly a double (every power of ten up to 10^22 is). */
const POWERS_OF_TEN = Array.from({ length: MAX_SIGNIFICANT_DIGITS + 1 }, (_, k) => Number(`1e${k}`));

/**
 * `parseDecimal` of `text[start, end)`, for the import's rows, without slicing the common case: a sign,
 * at most MAX_SIGNIFICANT_DIGITS digits and a point. Their digits as an integer and the power of ten
 * of the fraction are both exact doubles, so their quotient is the correctly rounded value of the
 * decimal, which is what Number() gives (Clinger's fast path). Anything else is parsed as a slice.
 */
export function readDecimal(text: string, start: number, end: number): number {
  let i = start;
  const sign = i < end ? text.charCodeAt(i) : 0;
  if (sign === 43 /* + */ || sign === 45 /* - */) i++;
  let mantissa = 0;
  let digits = 0;
  let fractionDigits = 0;
  let seenPoint = false;
  for (; i < end; i++) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) {
      mantissa = mantissa * 10 + (code - 48);
      digits++;
      if (seenPoint) fractionDigits++;
    } else if (code === 46 /* . */ && !seenPoint) {
      seenPoint = true;
    } else {
      return parseDecimal(text.slice(start, end));
    }
  }
  if (digits === 0 || digits > MAX_SIGNIFICANT_DIGITS) return parseDecimal(text.slice(start, end));
  const value = mantissa / POWERS_OF_TEN[fractionDigits]!;
  return sign === 45 ? -value : value;
}

/**
 * `readDecimal`, except that more than MAX_SIGNIFICANT_DIGITS digits are read too, for the field's files,
 * which carry binary artefacts such as 0.6709999999999999 that the caller then rounds (roundLevel).
 */
export function readLongDecimal(text: string, start: number, end: number): number {
  const value = readDecimal(text, start, end);
  if (!Number.isNaN(value)) return value;
  const slice = text.slice(start, end);
  const significant = scanDecimal(slice);
  if (significant <= MAX_SIGNIFICANT_DIGITS) return Number.NaN;
  const long = Number(slice);
  return inRange(long, significant) ? long : Number.NaN;
}

/** Why `parseDecimal` refused `text`. */
export function decimalProblem(text: string): string {
  const significant = scanDecimal(text);
  if (significant === EMPTY) return 'is empty';
  if (significant === MALFORMED) {
    return /^[+-]?(nan|inf|infinity)$/i.test(text)
      ? 'not a finite number (NaN and Infinity are not measurements)'
      : 'not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)';
  }
  if (significant > MAX_SIGNIFICANT_DIGITS) {
    return `has ${significant} significant digits; at most ${MAX_SIGNIFICANT_DIGITS} are stored exactly (double precision), more would be rounded`;
  }
  return 'out of the range of double precision';
}

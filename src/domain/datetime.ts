/**
 * RFC 3339 date-times, the profile of ISO 8601 that OpenAPI's `format: date-time` means, with the
 * offset required. Used by the API (`from`, `to`) and by the CSV import (`observedAt`), so both accept
 * and reject exactly the same texts.
 *
 * Instants are kept as whole epoch seconds plus microseconds: a JavaScript number cannot hold epoch
 * microseconds of distant years exactly, and microseconds must never be rounded.
 */

export interface Instant {
  /** Whole seconds since 1970-01-01T00:00:00Z. */
  readonly seconds: number;
  /** 0 to 999,999. */
  readonly micros: number;
}

export type ParseResult = { ok: true; instant: Instant } | { ok: false; reason: string };

/** The shape clients most often send by mistake: a `+` offset that URL decoding turned into a space. */
const PLUS_AS_SPACE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)? \d{2}:\d{2}$/;

export const EXAMPLE = '2024-01-01T00:00:00Z';

/** Fraction digits an instant keeps: microseconds. A text with more is refused, never rounded. */
export const FRACTION_DIGITS = 6;

/**
 * The accepted form in words, for every text that states it (the OpenAPI document's description and
 * parameters): `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or an offset.
 */
export const DATE_TIME_FORM =
  `\`YYYY-MM-DDTHH:MM:SS\`, an optional fraction of 1 to ${FRACTION_DIGITS} digits, then \`Z\` or ` +
  '`±HH:MM`';

const fail = (reason: string): ParseResult => ({ ok: false, reason });

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/**
 * The numbers of a text that has the shape
 * `^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|[+-](\d{2}):(\d{2}))$`,
 * not yet range-checked. Read character by character into one reused object: the import parses
 * millions of these, and a regular expression with captures costs a dozen strings per value.
 */
interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  fractionDigits: number;
  /** The first FRACTION_DIGITS fraction digits as microseconds. */
  micros: number;
  /** 0 for Z, else +1 or -1. */
  offsetSign: number;
  offsetHours: number;
  offsetMinutes: number;
}

const fields: Fields = {
  year: 0,
  month: 0,
  day: 0,
  hour: 0,
  minute: 0,
  second: 0,
  fractionDigits: 0,
  micros: 0,
  offsetSign: 0,
  offsetHours: 0,
  offsetMinutes: 0,
};

/** The ASCII digit at `i` (what `\d` matches), or -1; -1 too from `end` on. */
function digitAt(text: string, i: number, end: number): number {
  const d = i < end ? text.charCodeAt(i) - 48 : -1;
  return d >= 0 && d <= 9 ? d : -1;
}

function twoDigitsAt(text: string, i: number, end: number): number {
  const high = digitAt(text, i, end);
  const low = digitAt(text, i + 1, end);
  return high < 0 || low < 0 ? -1 : high * 10 + low;
}

function isCode(text: string, i: number, a: number, b: number): boolean {
  const code = text.charCodeAt(i);
  return code === a || code === b;
}

/** The shortest text of the shape: `YYYY-MM-DDTHH:MM:SSZ`. */
const SHORTEST = 20;

/**
 * Scans `text[start, end)`. The fixed positions are read only once the text is long enough for them,
 * so that the characters after `end` (the rest of a CSV line) never count.
 */
function scanFields(text: string, start: number, end: number, f: Fields): boolean {
  if (end - start < SHORTEST) return false;
  const century = twoDigitsAt(text, start, end);
  const yearOfCentury = twoDigitsAt(text, start + 2, end);
  f.month = twoDigitsAt(text, start + 5, end);
  f.day = twoDigitsAt(text, start + 8, end);
  f.hour = twoDigitsAt(text, start + 11, end);
  f.minute = twoDigitsAt(text, start + 14, end);
  f.second = twoDigitsAt(text, start + 17, end);
  if ((century | yearOfCentury | f.month | f.day | f.hour | f.minute | f.second) < 0) return false;
  if (!isCode(text, start + 4, 45, 45) || !isCode(text, start + 7, 45, 45)) return false; // - -
  if (!isCode(text, start + 10, 84, 116)) return false; // T t
  if (!isCode(text, start + 13, 58, 58) || !isCode(text, start + 16, 58, 58)) return false; // : :
  f.year = century * 100 + yearOfCentury;
  let i = start + 19;
  f.fractionDigits = 0;
  f.micros = 0;
  if (isCode(text, i, 46, 46 /* . */)) {
    for (let d = digitAt(text, ++i, end); d >= 0; d = digitAt(text, ++i, end)) {
      if (f.fractionDigits < FRACTION_DIGITS) f.micros = f.micros * 10 + d;
      f.fractionDigits++;
    }
    if (f.fractionDigits === 0) return false;
    for (let n = f.fractionDigits; n < FRACTION_DIGITS; n++) f.micros *= 10;
  }
  if (i >= end) return false;
  if (isCode(text, i, 90, 122 /* Z z */)) {
    f.offsetSign = 0;
    i += 1;
  } else if (isCode(text, i, 43, 45 /* + - */)) {
    f.offsetSign = text.charCodeAt(i) === 45 ? -1 : 1;
    f.offsetHours = twoDigitsAt(text, i + 1, end);
    f.offsetMinutes = twoDigitsAt(text, i + 4, end);
    if ((f.offsetHours | f.offsetMinutes) < 0 || i + 3 >= end || !isCode(text, i + 3, 58, 58)) return false;
    i += 6;
  } else return false;
  return i === end;
}

/** Why `text[start, end)` is not an acceptable date-time, or undefined when it is (its fields in `fields`). */
function problemOf(text: string, start: number, end: number): string | undefined {
  const f = fields;
  if (!scanFields(text, start, end, f)) {
    if (PLUS_AS_SPACE.test(text.slice(start, end))) {
      return "the offset's '+' arrived as a space: encode '+' as %2B in the query string";
    }
    return `must be an RFC 3339 date-time with a UTC offset, such as ${EXAMPLE} or 2024-01-01T02:00:00+02:00`;
  }
  if (f.year < 1) return 'year must be from 0001 to 9999';
  if (f.month < 1 || f.month > 12) return `month ${text.slice(start + 5, start + 7)} does not exist`;
  if (f.day < 1 || f.day > daysInMonth(f.year, f.month)) {
    return `day ${text.slice(start + 8, start + 10)} does not exist in ${text.slice(start, start + 7)}`;
  }
  if (f.hour > 23) return `hour ${text.slice(start + 11, start + 13)} does not exist (00 to 23)`;
  if (f.minute > 59) return `minute ${text.slice(start + 14, start + 16)} does not exist (00 to 59)`;
  if (f.second > 59)
    return `second ${text.slice(start + 17, start + 19)} is not supported (00 to 59; no leap seconds)`;
  if (f.fractionDigits > FRACTION_DIGITS) {
    return `has more than ${FRACTION_DIGITS} fractional digits (the precision is one microsecond)`;
  }
  if (f.offsetSign !== 0 && (f.offsetHours > 23 || f.offsetMinutes > 59)) {
    return `offset ${text.slice(end - 6, end)} does not exist`;
  }
  return undefined;
}

/** The whole seconds of the fields `problemOf` accepted. */
function secondsOf(f: Fields): number {
  const offsetMinutes = f.offsetSign === 0 ? 0 : f.offsetSign * (f.offsetHours * 60 + f.offsetMinutes);
  return (
    daysFromCivil(f.year, f.month, f.day) * 86_400 +
    f.hour * 3_600 +
    f.minute * 60 +
    f.second -
    offsetMinutes * 60
  );
}

export function parseDateTime(text: string): ParseResult {
  const problem = problemOf(text, 0, text.length);
  if (problem !== undefined) return fail(problem);
  return { ok: true, instant: { seconds: secondsOf(fields), micros: fields.micros } };
}

/** The instant of a text the service wrote or checked before: one it refuses is a fault, named. */
export function parseInstant(text: string): Instant {
  const parsed = parseDateTime(text);
  if (!parsed.ok) throw new Error(`${text}: ${parsed.reason}`);
  return parsed.instant;
}

/** The instant `micros` microseconds after 1970 (as a batch holds it). */
export function instantOfMicros(micros: number): Instant {
  const seconds = Math.floor(micros / 1_000_000);
  return { seconds, micros: micros - seconds * 1_000_000 };
}

/** Where `readDateTime` leaves the instant it accepted; read it before the next call. */
export const readInstant = { seconds: 0, micros: 0 };

/**
 * `parseDateTime` of `text[start, end)` without allocating when it is accepted: for the import, which
 * reads millions of them out of CSV lines. Returns undefined and leaves the instant in `readInstant`,
 * or returns why the text is refused (parseDateTime's reason).
 */
export function readDateTime(text: string, start: number, end: number): string | undefined {
  const problem = problemOf(text, start, end);
  if (problem !== undefined) return problem;
  readInstant.seconds = secondsOf(fields);
  readInstant.micros = fields.micros;
  return undefined;
}

/**
 * `readDateTime` of a date `YYYY-MM-DD` and a time `HH:MM:SS` in UTC given apart (as Delft-FEWS writes
 * them), read by position without joining them: true with the instant in `readInstant`, or false when
 * either has another shape or a field out of range, for `readDateTime` of the two joined to read or
 * refuse.
 */
export function readDateAndTime(date: string, time: string): boolean {
  if (date.length !== 10 || time.length !== 8) return false;
  const century = twoDigitsAt(date, 0, 10);
  const yearOfCentury = twoDigitsAt(date, 2, 10);
  const month = twoDigitsAt(date, 5, 10);
  const day = twoDigitsAt(date, 8, 10);
  const hour = twoDigitsAt(time, 0, 8);
  const minute = twoDigitsAt(time, 3, 8);
  const second = twoDigitsAt(time, 6, 8);
  if ((century | yearOfCentury | month | day | hour | minute | second) < 0) return false;
  if (!isCode(date, 4, 45, 45) || !isCode(date, 7, 45, 45)) return false; // - -
  if (!isCode(time, 2, 58, 58) || !isCode(time, 5, 58, 58)) return false; // : :
  const year = century * 100 + yearOfCentury;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  readInstant.seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second;
  readInstant.micros = 0;
  return true;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** RFC 3339 in UTC ending in `Z`; the fraction appears only when not zero, without trailing zeros. */
export function formatInstant({ seconds, micros }: Instant): string {
  const days = Math.floor(seconds / 86_400);
  const secondOfDay = seconds - days * 86_400;
  // civil_from_days (Hinnant), the inverse of daysFromCivil.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(secondOfDay / 3_600);
  const minute = Math.floor((secondOfDay % 3_600) / 60);
  const second = secondOfDay % 60;
  const fraction = micros === 0 ? '' : `.${String(micros).padStart(FRACTION_DIGITS, '0').replace(/0+$/, '')}`;
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}${fraction}Z`;
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export const compareInstants = (a: Instant, b: Instant): number =>
  a.seconds - b.seconds || a.micros - b.micros;

/** The UTC midnight that starts the day of `instant`. */
export const dayStart = ({ seconds }: Instant): Instant => ({
  seconds: Math.floor(seconds / 86_400) * 86_400,
  micros: 0,
});

/** The UTC midnight that starts the day after `instant`'s. */
export const nextDay = (instant: Instant): Instant => ({
  seconds: dayStart(instant).seconds + 86_400,
  micros: 0,
});

/** One microsecond after `instant`: the exclusive end of a period that includes it. */
export const nextMicro = ({ seconds, micros }: Instant): Instant =>
  micros === 999_999 ? { seconds: seconds + 1, micros: 0 } : { seconds, micros: micros + 1 };

export const earlierOf = (a: Instant, b: Instant): Instant => (compareInstants(a, b) <= 0 ? a : b);
export const laterOf = (a: Instant, b: Instant): Instant => (compareInstants(a, b) >= 0 ? a : b);

/** `b - a` in microseconds (exact: differences of up to ~285 years fit a double's integer range). */
export function microsBetween(a: Instant, b: Instant): number {
  return (b.seconds - a.seconds) * 1_000_000 + (b.micros - a.micros);
}

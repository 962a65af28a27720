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

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The shape clients most often send by mistake: a `+` offset that URL decoding turned into a space. */
const PLUS_AS_SPACE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)? \d{2}:\d{2}$/;

export const EXAMPLE = '2024-01-01T00:00:00Z';

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

export function parseDateTime(text: string): ParseResult {
  const m = RFC3339.exec(text);
  if (!m) {
    if (PLUS_AS_SPACE.test(text)) {
      return fail("the offset's '+' arrived as a space: encode '+' as %2B in the query string");
    }
    return fail(
      `must be an RFC 3339 date-time with a UTC offset, such as ${EXAMPLE} or 2024-01-01T02:00:00+02:00`,
    );
  }
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om] = m as unknown as string[];
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1) return fail('year must be from 0001 to 9999');
  if (month < 1 || month > 12) return fail(`month ${mo} does not exist`);
  if (day < 1 || day > daysInMonth(year, month)) return fail(`day ${d} does not exist in ${y}-${mo}`);
  if (hour > 23) return fail(`hour ${h} does not exist (00 to 23)`);
  if (minute > 59) return fail(`minute ${mi} does not exist (00 to 59)`);
  if (second > 59) return fail(`second ${s} is not supported (00 to 59; no leap seconds)`);
  if (fraction !== undefined && fraction.length > 6) {
    return fail('has more than 6 fractional digits (the precision is one microsecond)');
  }
  let offsetMinutes = 0;
  if (!zulu) {
    const offsetHours = Number(oh);
    const offsetMins = Number(om);
    if (offsetHours > 23 || offsetMins > 59) return fail(`offset ${sign}${oh}:${om} does not exist`);
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const seconds =
    daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60;
  const micros = fraction === undefined ? 0 : Number(fraction.padEnd(6, '0'));
  return { ok: true, instant: { seconds, micros } };
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
  const fraction = micros === 0 ? '' : `.${String(micros).padStart(6, '0').replace(/0+$/, '')}`;
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}${fraction}Z`;
}

/** `b - a` in microseconds (exact: differences of up to ~285 years fit a double's integer range). */
export function microsBetween(a: Instant, b: Instant): number {
  return (b.seconds - a.seconds) * 1_000_000 + (b.micros - a.micros);
}

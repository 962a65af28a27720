/**
 * RFC 3339 texts of known instants, written independently of src/domain/datetime.ts (the calendar is
 * Date's), and fast-check generators for them: the reference the parser's properties and the hostile
 * input test compare against.
 */
import fc from 'fast-check';
import type { Instant } from '../../src/domain/datetime.js';

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in epoch seconds. */
export const FIRST_SECOND = -62_135_596_800;
export const LAST_SECOND = 253_402_300_799;

export const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The civil fields of epoch seconds, by Date (its getters are right for years 1 to 9999). */
function civil(seconds: number) {
  const d = new Date(seconds * 1000);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/** Days in a month by Date: day 0 of the next month is the last day of this one. */
export function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}

/** How a fraction of `micros` may be written: 1 to 6 digits that lose nothing, trailing zeros allowed. */
function fractionText(micros: number, extraDigits: number): string {
  if (micros === 0 && extraDigits === 0) return '';
  const digits = String(micros).padStart(6, '0').replace(/0+$/, '');
  return `.${digits.padEnd(Math.min(6, digits.length + extraDigits), '0') || '0'}`;
}

const offsetText = (minutes: number, zulu: string) =>
  minutes === 0 && zulu !== ''
    ? zulu
    : `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;

export interface WritingStyle {
  /** `T` or `t`. */
  t: string;
  /** For a zero offset: `Z`, `z`, `` (+00:00) or `-` (-00:00). */
  zulu: string;
  /** Trailing zeros added to the fraction (up to 6 digits in all). */
  extra: number;
}

/**
 * The RFC 3339 text of an instant as a client in another time zone writes it: the wall clock at
 * `offsetMinutes`, any fraction width that loses nothing, `T`/`t`, and `Z`/`z`/`+00:00`/`-00:00` for UTC.
 */
export function writeInstant(instant: Instant, offsetMinutes: number, style: WritingStyle): string {
  const local = civil(instant.seconds + offsetMinutes * 60);
  const date = `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.day)}`;
  const time = `${pad(local.hour)}:${pad(local.minute)}:${pad(local.second)}`;
  const offset = offsetMinutes === 0 && style.zulu === '-' ? '-00:00' : offsetText(offsetMinutes, style.zulu);
  return `${date}${style.t}${time}${fractionText(instant.micros, style.extra)}${offset}`;
}

/** The form the API returns: UTC, `Z`, the fraction only when not zero and without trailing zeros. */
export const utcText = (instant: Instant) => writeInstant(instant, 0, { t: 'T', zulu: 'Z', extra: 0 });

export const microsArb = fc.oneof(
  fc.integer({ min: 0, max: 999_999 }),
  fc.constantFrom(0, 1, 500_000, 999_999),
);

/** Instants a day away from the ends of 0001 to 9999, so every offset's wall clock stays in range. */
export const instantArb = fc.record({
  seconds: fc.integer({ min: FIRST_SECOND + 86_400, max: LAST_SECOND - 86_400 }),
  micros: microsArb,
});

export const offsetArb = fc.oneof(
  fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
  fc.constantFrom(0, 60, -60, 330, 345),
);

export const styleArb: fc.Arbitrary<WritingStyle> = fc.record({
  t: fc.constantFrom('T', 't'),
  zulu: fc.constantFrom('Z', 'z', '', '-'),
  extra: fc.integer({ min: 0, max: 6 }),
});

/** The instant `micros` microseconds after `instant` (negative: before). */
export function addMicros(instant: Instant, micros: number): Instant {
  const total = instant.micros + micros;
  const seconds = Math.floor(total / 1_000_000);
  return { seconds: instant.seconds + seconds, micros: total - seconds * 1_000_000 };
}

/**
 * Properties of the RFC 3339 parser over generated values, with Date as the independent reference for
 * the calendar: round trip, equivalence of offsets, rejection of exactly the impossible fields, and
 * agreement with Date.parse on every millisecond instant of years 0001 to 9999; the import's reading of
 * a text inside a CSV line agrees with it, and so does FEWS's date and time read apart.
 */
import fc from 'fast-check';
import t from 'tap';
import {
  formatInstant,
  type Instant,
  microsBetween,
  parseDateTime,
  readDateAndTime,
  readDateTime,
  readInstant,
} from '../../src/domain/datetime.js';
import {
  daysInMonth,
  FIRST_SECOND,
  instantArb,
  LAST_SECOND,
  offsetArb,
  pad,
  styleArb,
  utcText,
  writeInstant,
} from '../helpers/dateTimes.js';

const RUNS = { numRuns: 20_000 };

const parsed = (text: string): Instant | string => {
  const result = parseDateTime(text);
  return result.ok ? result.instant : result.reason;
};

t.test('round trip: parse ∘ write is the instant, and parse ∘ format is the identity', async (t) => {
  const same = (a: Instant | string, b: Instant) => typeof a !== 'string' && microsBetween(a, b) === 0;
  let checked = 0;
  fc.assert(
    fc.property(instantArb, offsetArb, styleArb, (instant, offset, style) => {
      const canonical = formatInstant(instant);
      if (!same(parsed(writeInstant(instant, offset, style)), instant)) return false;
      if (!same(parsed(canonical), instant)) return false;
      if (canonical !== utcText(instant)) return false;
      checked++;
      return true;
    }),
    RUNS,
  );
  t.equal(checked, RUNS.numRuns);
});

t.test('the same instant written with any two offsets parses to the same instant', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(instantArb, offsetArb, offsetArb, styleArb, (instant, a, b, style) => {
      const left = parseDateTime(writeInstant(instant, a, style));
      const right = parseDateTime(writeInstant(instant, b, style));
      if (!left.ok || !right.ok || microsBetween(left.instant, right.instant) !== 0) return false;
      checked++;
      return true;
    }),
    RUNS,
  );
  t.equal(checked, RUNS.numRuns);
});

t.test('agrees with Date on every millisecond instant of years 0001 to 9999', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(fc.integer({ min: FIRST_SECOND * 1000, max: LAST_SECOND * 1000 + 999 }), (ms) => {
      const iso = new Date(ms).toISOString(); // `YYYY-MM-DDTHH:MM:SS.mmmZ` for these years
      const result = parseDateTime(iso);
      if (!result.ok) return false;
      const { seconds, micros } = result.instant;
      if (seconds * 1000 + micros / 1000 !== ms) return false;
      // And back: the same text without trailing zeros of the fraction.
      if (formatInstant(result.instant) !== iso.replace(/\.?0+Z$/, 'Z').replace(/\.Z$/, 'Z')) return false;
      checked++;
      return true;
    }),
    RUNS,
  );
  t.equal(checked, RUNS.numRuns);
});

/** Two digits: mostly a value that exists, often one at or just past a limit, sometimes anything. */
const field = (min: number, max: number) =>
  fc.oneof(
    { arbitrary: fc.integer({ min, max }), weight: 8 },
    { arbitrary: fc.constantFrom(min, max, max + 1, Math.max(0, min - 1)), weight: 1 },
    { arbitrary: fc.integer({ min: 0, max: 99 }), weight: 1 },
  );

t.test('accepts exactly the fields that exist, by Date, and rejects the rest with a reason', async (t) => {
  let accepted = 0;
  let rejected = 0;
  fc.assert(
    fc.property(
      fc.record({
        year: fc.oneof(
          fc.integer({ min: 0, max: 9999 }),
          fc.constantFrom(0, 1, 1900, 2000, 2100, 2400, 9999),
        ),
        month: field(1, 12),
        day: field(1, 31),
        hour: field(0, 23),
        minute: field(0, 59),
        second: field(0, 59),
        offsetHours: field(0, 23),
        offsetMinutes: field(0, 59),
        sign: fc.constantFrom('+', '-'),
      }),
      (f) => {
        const text = `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}${f.sign}${pad(f.offsetHours)}:${pad(f.offsetMinutes)}`;
        const exists =
          f.year >= 1 &&
          f.month >= 1 &&
          f.month <= 12 &&
          f.day >= 1 &&
          f.day <= daysInMonth(f.year, f.month) &&
          f.hour <= 23 &&
          f.minute <= 59 &&
          f.second <= 59 &&
          f.offsetHours <= 23 &&
          f.offsetMinutes <= 59;
        const result = parseDateTime(text);
        if (result.ok !== exists) return false;
        if (result.ok) {
          accepted++;
          // The instant Date computes for the same fields.
          const utc = new Date(0);
          utc.setUTCFullYear(f.year, f.month - 1, f.day);
          utc.setUTCHours(f.hour, f.minute, f.second);
          const offset = (f.sign === '-' ? -1 : 1) * (f.offsetHours * 60 + f.offsetMinutes);
          return result.instant.seconds === utc.getTime() / 1000 - offset * 60 && result.instant.micros === 0;
        }
        rejected++;
        // An impossible value is named, not refused as a malformed text.
        return /does not exist|not supported|year must be/.test(result.reason);
      },
    ),
    RUNS,
  );
  t.ok(accepted > 1000 && rejected > 1000, `both sides covered (${accepted} accepted, ${rejected} rejected)`);
});

t.test('impossible days of real months are rejected, whatever the year', async (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 9999 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 68 }),
      (year, month, beyond) => {
        const day = daysInMonth(year, month) + beyond;
        if (day > 99) return true;
        const result = parseDateTime(`${pad(year, 4)}-${pad(month)}-${pad(day)}T00:00:00Z`);
        return !result.ok && result.reason.includes(`day ${pad(day)} does not exist`);
      },
    ),
    RUNS,
  );
  t.pass('no impossible day accepted');
});

t.test('more than six fraction digits are refused, never rounded', async (t) => {
  fc.assert(
    fc.property(instantArb, fc.stringMatching(/^[0-9]{1,20}$/), (instant, more) => {
      const text = formatInstant(instant).replace(/(\.\d+)?Z$/, (_, fraction: string | undefined) => {
        return `${(fraction ?? '.').padEnd(7, '0')}${more}Z`;
      });
      const result = parseDateTime(text);
      return !result.ok && /more than 6 fractional digits/.test(result.reason);
    }),
    { numRuns: 5000 },
  );
  t.pass('no text with 7 or more fraction digits accepted');
});

t.test('readDateTime of a text inside a line is parseDateTime of the text alone', async (t) => {
  // Texts near the accepted shape, each cut, stretched or with one character replaced, between the
  // fields of a CSV line: what lies outside the bounds must never count.
  const nearText = fc
    .tuple(instantArb, offsetArb, styleArb, fc.nat(40), fc.nat(40), fc.string({ maxLength: 2 }))
    .map(([instant, offset, style, cut, at, other]) => {
      const text = writeInstant(instant, offset, style);
      if (cut % 4 === 0) return text.slice(0, text.length - (cut % text.length));
      if (cut % 4 === 1)
        return `${text.slice(0, at % text.length)}${other}${text.slice((at % text.length) + 1)}`;
      return text;
    });
  const lineSide = fc.stringMatching(/^[0-9:.Z+\-,]{0,8}$/);
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(nearText, lineSide, lineSide, (text, before, after) => {
      const line = `${before}${text}${after}`;
      const problem = readDateTime(line, before.length, before.length + text.length);
      const expected = parseDateTime(text);
      if (!expected.ok) {
        refused++;
        return problem === expected.reason;
      }
      accepted++;
      return problem === undefined && microsBetween(readInstant, expected.instant) === 0;
    }),
    RUNS,
  );
  t.ok(accepted > 1000 && refused > 1000, `${accepted} accepted and ${refused} refused alike`);
});

t.test('readDateAndTime of a date and a time apart is parseDateTime of them joined, in UTC', async (t) => {
  // Fields around their ranges, sometimes with a fraction or one character replaced.
  const apart = fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 25 }),
      fc.integer({ min: 0, max: 61 }),
      fc.integer({ min: 0, max: 61 }),
      fc.nat(40),
      fc.string({ maxLength: 2 }),
    )
    .map(([year, month, day, hour, minute, second, at, other]) => {
      let date = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
      let time = `${pad(hour)}:${pad(minute)}:${pad(second)}`;
      if (at % 5 === 0) time += `.${at}`;
      else if (at % 5 === 1) date = `${date.slice(0, at % 10)}${other}${date.slice((at % 10) + 1)}`;
      else if (at % 5 === 2) time = `${time.slice(0, at % 8)}${other}${time.slice((at % 8) + 1)}`;
      return [date, time] as const;
    });
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(apart, ([date, time]) => {
      const expected = parseDateTime(`${date}T${time}Z`);
      const read = readDateAndTime(date, time);
      if (!read) {
        refused++;
        return !expected.ok || date.length !== 10 || time.length !== 8;
      }
      accepted++;
      return expected.ok && microsBetween(readInstant, expected.instant) === 0;
    }),
    RUNS,
  );
  t.ok(accepted > 1000 && refused > 1000, `${accepted} read and ${refused} left to readDateTime alike`);
});

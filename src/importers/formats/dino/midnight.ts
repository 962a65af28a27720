/** The instant a date begins in a time zone, for files whose dates have no time and no offset (DINO). */
import { UserError } from '../../../errors.js';

const WALL_CLOCK = {
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
} as const;

/**
 * Midnights already found, per zone and date (`yyyymmdd`): each costs three calls into Intl, and an
 * archive's files repeat the same dates (every filter read on the same days). Bounded: a century of
 * dates, then it starts again.
 */
const KNOWN: Map<string, Map<number, number>> = new Map();
const MOST_KNOWN_DATES = 36_525;

/** Returns the epoch seconds of midnight at the start of a date in `timeZone` (an IANA name). */
export function midnightIn(timeZone: string): (year: number, month: number, day: number) => number {
  const known = KNOWN.get(timeZone) ?? new Map<number, number>();
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { ...WALL_CLOCK, timeZone });
  } catch {
    throw new UserError(
      `--timezone: ${JSON.stringify(timeZone)} is not a time zone (an IANA name, such as Europe/Amsterdam)`,
    );
  }
  const wallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  /** How far the zone's clock is ahead of UTC at `utc` (milliseconds, both whole seconds). */
  const offsetAt = (utc: number): number => {
    for (const part of format.formatToParts(utc)) {
      if (part.type in wallClock) wallClock[part.type as keyof typeof wallClock] = Number(part.value);
    }
    const { year, month, day, hour, minute, second } = wallClock;
    return wallTime(year, month, day, hour, minute, second) - utc;
  };
  KNOWN.set(timeZone, known);
  return (year, month, day) => {
    const date = (year * 100 + month) * 100 + day;
    const found = known.get(date);
    if (found !== undefined) return found;
    const wall = wallTime(year, month, day, 0, 0, 0);
    const guess = offsetAt(wall);
    const before = wall - guess;
    const offset = offsetAt(before);
    const midnight = wall - offset;
    // The same offset twice (almost every date): `before` is midnight, and asking Intl again would say so.
    // Otherwise a zone whose clocks skip midnight (00:00 to 01:00): the day begins when they jump.
    const seconds = (offset === guess || offsetAt(midnight) === offset ? midnight : before) / 1000;
    if (known.size >= MOST_KNOWN_DATES) known.clear();
    known.set(date, seconds);
    return seconds;
  };
}

/** A wall-clock time read as if it were UTC, in epoch milliseconds (years before 100 included). */
function wallTime(year: number, month: number, day: number, hour: number, minute: number, second: number) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

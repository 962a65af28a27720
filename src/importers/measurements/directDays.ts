/**
 * The daily rollups (sql/011) of the days a direct import writes whole, summed from the file's rows as it
 * reads them, so that the database need not read them again. The direct path writes every row of a tube
 * after its first instant in the file, so each of the tube's days after the first holds the file's rows
 * alone, in the file's order, which is time order. For those days this computes what the database's
 * aggregates would, to the bit: the mean as float8 `avg` does (a plain sum from 0 in time order, divided
 * by the count), min and max keeping the later of two equal values (float8smaller, float8larger). The
 * first day (stored rows may precede the file's), and a day with a value too large for the rollups to
 * sum, are left to the database (rollup_measurement_days).
 */
import { STATUSES } from '../../domain/status.js';

const DAY_SECONDS = 86_400;
/** Beyond this, or not finite, a value's day is summed by the database (sql/011). */
const LARGE = 1e140;
/** Every non-empty set of statuses, as the rollups' bits. */
const SETS = 2 ** STATUSES.length - 1;

/** One rollup row: `day` in seconds since 1970 (a UTC midnight). */
export interface DayRollup<Tube> {
  tube: Tube;
  day: number;
  statuses: number;
  present: number;
  count: number;
  mean: number;
  min: number;
  max: number;
}

interface OpenDay {
  /** Days since 1970. */
  day: number;
  /** The tube's first day in the file. */
  first: boolean;
  large: boolean;
  present: number;
  /** By set of statuses (index 1 to SETS). */
  count: number[];
  sum: number[];
  min: number[];
  max: number[];
}

const openDay = (day: number, first: boolean): OpenDay => ({
  day,
  first,
  large: false,
  present: 0,
  count: new Array(SETS + 1).fill(0),
  sum: new Array(SETS + 1).fill(0),
  min: new Array(SETS + 1).fill(0),
  max: new Array(SETS + 1).fill(0),
});

/**
 * The rollups of the days of each tube (any object that stands for one), row by row. A day is summed once
 * a later day of its tube arrives, or the file ends; the summed days wait to be taken (`takeSummed`), so
 * that the import can write them as it goes and keep no more than a batch of them.
 */
export class DirectDays<Tube> {
  private readonly open = new Map<Tube, OpenDay>();
  private summed: DayRollup<Tube>[] = [];
  /** Days (seconds since 1970) the database sums, once their rows are stored. */
  private left: { tube: Tube; day: number }[] = [];

  /** A row of `tube`, each tube's in time order. */
  add(tube: Tube, seconds: number, value: number, status: number): void {
    const day = Math.floor(seconds / DAY_SECONDS);
    let state = this.open.get(tube);
    if (state === undefined || state.day !== day) {
      if (state !== undefined) this.close(tube, state);
      state = openDay(day, state === undefined);
      this.open.set(tube, state);
    }
    const bit = 1 << status;
    state.present |= bit;
    if (!(Math.abs(value) < LARGE)) state.large = true;
    const { count, sum, min, max } = state;
    for (let set = 1; set <= SETS; set++) {
      if ((set & bit) === 0) continue;
      sum[set]! += value;
      const before = count[set]!;
      count[set] = before + 1;
      if (before === 0) {
        min[set] = value;
        max[set] = value;
      } else {
        if (!(min[set]! < value)) min[set] = value;
        if (!(max[set]! > value)) max[set] = value;
      }
    }
  }

  /** Rollup rows summed, and days left to the database, not yet taken. */
  get waiting(): number {
    return this.summed.length + this.left.length;
  }

  /** The rollup rows summed since the last call. */
  takeSummed(): DayRollup<Tube>[] {
    const summed = this.summed;
    this.summed = [];
    return summed;
  }

  /** The days closed since the last call that the database is to sum. */
  takeLeft(): { tube: Tube; day: number }[] {
    const left = this.left;
    this.left = [];
    return left;
  }

  /** Closes every tube's last day; call once, after the last row. */
  finish(): void {
    for (const [tube, state] of this.open) this.close(tube, state);
    this.open.clear();
  }

  private close(tube: Tube, state: OpenDay): void {
    const day = state.day * DAY_SECONDS;
    if (state.first || state.large) {
      this.left.push({ tube, day });
      return;
    }
    const { present, count, sum, min, max } = state;
    // The day's statuses and, when it holds several, every other non-empty subset of them.
    for (let set = 1; set <= SETS; set++) {
      if ((set & present) !== set) continue;
      const n = count[set]!;
      this.summed.push({
        tube,
        day,
        statuses: set,
        present,
        count: n,
        mean: sum[set]! / n,
        min: min[set]!,
        max: max[set]!,
      });
    }
  }
}

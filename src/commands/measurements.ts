/**
 * `gwapi measurements status|remove`: the operator's corrections. Every argument is checked before the
 * database is opened, and every problem is named in the one line a refusal prints.
 */
import { createInterface } from 'node:readline/promises';
import type { Settings } from '../config.js';
import { count } from '../contract.js';
import { formatInstant, type Instant, parseDateTime } from '../domain/datetime.js';
import type { Status } from '../domain/status.js';
import { UUID_SHAPE } from '../domain/uuid.js';
import { UserError } from '../errors.js';
import {
  countMeasurements,
  type Interval,
  removeMeasurements,
  setStatus,
  type Tubes,
} from '../importers/measurements/corrections.js';
import { withDatabase } from './database.js';

export interface IntervalOptions {
  from: string;
  to: string;
}

export interface StatusOptions extends IntervalOptions {
  tube?: string[];
  allTubes: boolean;
}

export interface RemoveOptions extends IntervalOptions {
  tube: string;
  yes: boolean;
}

const measurements = (n: number) => `${count(n)} ${n === 1 ? 'measurement' : 'measurements'}`;

export async function setStatusCommand(
  settings: Settings,
  status: Status,
  options: StatusOptions,
): Promise<void> {
  const problems: string[] = [];
  const tubes = checkTubes(options, problems);
  const interval = checkInterval(options, problems);
  refuse(problems);
  const changed = await withDatabase(settings, 'gwapi measurements status', (sql) =>
    setStatus(sql, tubes!, interval!, status),
  );
  process.stdout.write(
    `set ${measurements(changed)} to ${status}` +
      `${changed === 0 ? ` (none ${describeInterval(interval!)} had another status)` : ''}\n`,
  );
}

export async function removeCommand(settings: Settings, options: RemoveOptions): Promise<void> {
  const problems: string[] = [];
  const [tube] = checkTubes({ tube: [options.tube], allTubes: false }, problems) as string[];
  const interval = checkInterval(options, problems);
  refuse(problems);
  const removed = await withDatabase(settings, 'gwapi measurements remove', async (sql) => {
    if (!options.yes) {
      const stored = await countMeasurements(sql, tube!, interval!);
      if (stored === 0) return 0;
      await confirm(`remove ${measurements(stored)} of tube ${tube} ${describeInterval(interval!)}?`);
    }
    return await removeMeasurements(sql, tube!, interval!);
  });
  process.stdout.write(`removed ${measurements(removed)} of tube ${tube} ${describeInterval(interval!)}\n`);
}

/** Lower-case identifiers, or every tube; a problem when they are malformed or not named exactly once. */
function checkTubes(
  options: { tube?: string[] | undefined; allTubes: boolean },
  problems: string[],
): Tubes | undefined {
  const listed = options.tube ?? [];
  if (options.allTubes && listed.length > 0) problems.push('--tube and --all-tubes: give one or the other');
  if (options.allTubes) return 'all';
  if (listed.length === 0) problems.push('--tube: name at least one tube (or give --all-tubes)');
  const malformed = listed.filter((value) => !UUID_SHAPE.test(value));
  if (malformed.length > 0) {
    problems.push(
      `--tube: not a tube identifier (expected a UUID): ${malformed.map((v) => JSON.stringify(v)).join(', ')}`,
    );
  }
  return [...new Set(listed.map((value) => value.toLowerCase()))];
}

/** `[from, to)`, with no bound on its length; a problem for each bad bound. */
function checkInterval(options: IntervalOptions, problems: string[]): Interval | undefined {
  const bound = (name: string, text: string): Instant | undefined => {
    const parsed = parseDateTime(text);
    if (parsed.ok) return parsed.instant;
    problems.push(`--${name}: ${parsed.reason}`);
    return undefined;
  };
  const from = bound('from', options.from);
  const to = bound('to', options.to);
  if (!from || !to) return undefined;
  if (to.seconds < from.seconds || (to.seconds === from.seconds && to.micros <= from.micros)) {
    problems.push('--to: must be later than --from (the interval includes --from and excludes --to)');
  }
  return { from, to };
}

function refuse(problems: string[]): void {
  if (problems.length > 0) throw new UserError(problems.join('; '));
}

const describeInterval = ({ from, to }: Interval) => `from ${formatInstant(from)} to ${formatInstant(to)}`;

/**
 * Asks on the terminal; anything but yes removes nothing. Without a terminal there is no one to ask,
 * and a script must say --yes: a removal cannot be undone.
 */
async function confirm(question: string): Promise<void> {
  if (!process.stdin.isTTY) {
    throw new UserError(
      `refusing to ${question.slice(0, -1)} without confirmation: standard input is not a terminal ` +
        '(give --yes to remove without asking)',
    );
  }
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await terminal.question(`${question} This cannot be undone. [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new UserError('nothing removed');
  } finally {
    terminal.close();
  }
}

/**
 * What the A/B scripts of two checkouts (bench/compare.ts, bench/compareSeries.ts,
 * bench/compareImport.ts) conclude, in one form: per benchmark and metric the medians of this checkout
 * and of the other, and the ratios this / other measured back to back within each round. Each script
 * prints its own rows as a table at its end; run by bench/compareAll.ts, it also sends them to it, which
 * prints the rows of all of them as one table.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, printTable, quartiles, ratio } from '../../testkit/report.js';

/** How far from 1 the median ratio may be and still count as no change (issue item 9: "within 10 %"). */
export const TOLERANCE = 0.1;

export interface Comparison {
  /** e.g. `discovery (br)` */
  benchmark: string;
  /** e.g. `server CPU/request`; every metric here is a cost: lower is better. */
  metric: string;
  unit: 'µs' | 'ms' | 's' | 'MB';
  /** Medians over the rounds of this checkout's and the other's samples. */
  this: number;
  other: number;
  /** this / other, one per round. */
  ratios: number[];
  /** The median ratio of each pair of processes, where the script starts the two sides afresh per pair. */
  pairs?: number[];
  /** Why the ratio decides nothing (a figure too small to compare), when so. */
  unjudged?: string;
}

/** What a script sends to bench/compareAll.ts. */
export interface ComparisonMessage {
  type: 'comparisons';
  database: string;
  rows: Comparison[];
}

/** The checkout these scripts belong to. */
export const THIS_CHECKOUT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** `DIR (COMMIT)`, with how many tracked files differ from the commit when any do. */
export function describeCheckout(dir: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
  try {
    const changed = git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean).length;
    return `${dir} (${git('rev-parse', '--short', 'HEAD')}${changed > 0 ? ` + ${changed} files changed` : ''})`;
  } catch {
    return dir;
  }
}

const figure = (value: number, unit: Comparison['unit']) =>
  `${value.toFixed(unit === 's' ? 2 : unit === 'ms' ? 0 : 1)} ${unit}`;

/** Within the tolerance, or which way it left it. */
export function verdict(row: Comparison): string {
  if (row.unjudged) return `not judged: ${row.unjudged}`;
  const middle = median(row.ratios);
  if (middle > 1 + TOLERANCE) return 'NOT within 10 %: slower';
  if (middle < 1 - TOLERANCE) return 'not within 10 %: faster';
  return 'within 10 %';
}

export function printComparisons(rows: Comparison[], other: string): void {
  printTable(
    [
      'benchmark',
      'metric',
      'this',
      'other',
      'this/other',
      'quartiles',
      'pairs (min–max)',
      'rounds',
      'verdict',
    ],
    rows.map((row) => {
      const [lower, upper] = quartiles(row.ratios);
      const pairs = row.pairs ?? [];
      return [
        row.benchmark,
        row.metric,
        figure(row.this, row.unit),
        figure(row.other, row.unit),
        ratio(median(row.ratios)),
        `${ratio(lower)} – ${ratio(upper)}`,
        pairs.length > 0
          ? `${ratio(Math.min(...pairs))} – ${ratio(Math.max(...pairs))} (${pairs.length})`
          : '–',
        String(row.ratios.length),
        verdict(row),
      ];
    }),
    [0, 1, 8],
  );
  console.log(
    `this: ${describeCheckout(THIS_CHECKOUT)}; other: ${describeCheckout(other)}. ` +
      'Ratios this / other, median over the rounds.',
  );
}

/** A script's last words: its rows as a table, and to bench/compareAll.ts when it runs the script. */
export function reportComparisons(rows: Comparison[], other: string, database: string): void {
  console.log();
  printComparisons(rows, other);
  const message: ComparisonMessage = { type: 'comparisons', database, rows };
  // Once sent, the channel goes: open, it would keep this process alive after its work.
  process.send?.(message, undefined, undefined, () => process.disconnect());
}

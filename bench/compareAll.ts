/**
 * The A/Bs of this checkout against another one (a git worktree of an earlier commit), one after the
 * other, each in a process of its own with its own throwaway database, and all their conclusions in one
 * table: per benchmark and metric this checkout's median, the other's, the median ratio this / other
 * over the rounds with its quartiles (and the range over pairs of server processes), and whether it is
 * within 10 % (issue item 9: "nothing regresses").
 *
 *   npm run bench -- compare OTHER_CHECKOUT [NAME[:ARG...]...]
 *   node --import tsx bench/compareAll.ts OTHER_CHECKOUT [NAME[:ARG...]...]
 *
 * NAME is discovery (bench/compare.ts), series (bench/compareSeries.ts) or import
 * (bench/compareImport.ts); the ARGs after it are that script's own, after OTHER_CHECKOUT:
 * `discovery:plain:8:6` runs `bench/compare.ts OTHER_CHECKOUT plain 8 6`. Without NAMEs, DEFAULTS.
 */
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { machineLine } from '../testkit/report.js';
import { type Comparison, type ComparisonMessage, printComparisons } from './lib/abReport.js';

requirePrerequisites([throwawayPostgres]);

const SCRIPTS: Record<string, string> = {
  discovery: 'compare.ts',
  series: 'compareSeries.ts',
  import: 'compareImport.ts',
};

/**
 * Enough rounds for medians that hold on two shared cores: two discovery servers of the same code
 * differ by up to ~10 % for their whole life with br, hence 8 fresh pairs of them, and by up to ~40 %
 * when they send the 230 kB plain body (an A/A run: pairs 0.76–1.41×), hence 16; a year-long request or
 * an import is seconds, so more rounds cost little (bench/README.md).
 */
const DEFAULTS = [
  'discovery:br:8:6',
  'discovery:plain:16:6',
  'series:plain:6:5',
  'series:br:6:5',
  'import:10',
];

const [other, ...names] = process.argv.slice(2);
const runs = (names.length > 0 ? names : DEFAULTS).map((item) => {
  const [name = '', ...args] = item.split(':');
  return { item, script: SCRIPTS[name], args };
});
const unknown = runs.filter((run) => !run.script);
if (!other || unknown.length > 0) {
  console.error(
    'usage: bench/compareAll.ts OTHER_CHECKOUT [NAME[:ARG...]...], NAME one of ' +
      `${Object.keys(SCRIPTS).join(', ')}${unknown.length > 0 ? ` (not ${unknown.map((run) => run.item).join(', ')})` : ''}`,
  );
  process.exit(2);
}
const checkout = resolve(other);

const started = new Date();
const loadAtStart = loadavg();
const rows: Comparison[] = [];
const databases = new Set<string>();
let failed = 0;
for (const run of runs) {
  const script = fileURLToPath(new URL(`./${run.script}`, import.meta.url));
  console.log(`\n=== bench/${run.script} ${[checkout, ...run.args].join(' ')} ===\n`);
  const child = fork(script, [checkout, ...run.args], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (message: ComparisonMessage) => {
    if (message.type !== 'comparisons') return;
    rows.push(...message.rows);
    databases.add(message.database);
  });
  const code = await new Promise<number>((done) => child.on('exit', (exitCode) => done(exitCode ?? 1)));
  if (code !== 0) {
    console.error(`bench/${run.script} exited with ${code}`);
    failed++;
  }
}

const minutes = (Date.now() - started.getTime()) / 60_000;
const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(' ');
console.log(`\n=== this checkout against ${checkout} ===\n`);
console.log(
  `${await machineLine()}; ${[...databases].join('; ')}\n` +
    `started ${started.toISOString().slice(0, 16)}Z, ${minutes.toFixed(0)} min; load average ` +
    `${load(loadAtStart)} at the start, ${load(loadavg())} at the end; ${runs.map((run) => run.item).join(' ')}\n`,
);
printComparisons(rows, checkout);
if (failed > 0) console.error(`${failed} of ${runs.length} A/Bs failed: their rows are missing`);
process.exit(failed > 0 ? 1 : 0);

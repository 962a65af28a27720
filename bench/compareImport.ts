/**
 * A/B of `gwapi import measurements` between this checkout and another (a git worktree), as
 * bench/compare.ts does for discovery: a year of 1-minute data for one tube (527,040 rows, the CSV of
 * bench/import.ts) imported by each checkout's own CLI (`node --import tsx CHECKOUT/src/cli.ts`, with
 * the service's Node options) into a fresh database on the same PostgreSQL (durable, as in
 * bench/import.ts), one import each per round, which goes first alternating.
 *
 * Each database is made by the checkout's own CLI (`gwapi migrate`, `gwapi import registry`); then a
 * CHECKPOINT, so that no import pays for the WAL of the one before; then the timed command, from spawn
 * to exit, as an operator would time it: start-up, the import to its commit, the VACUUM after it. Per
 * import: the wall time and the CLI process's CPU; per round also the start-up alone (`gwapi --help`:
 * every module loaded, nothing done). The figures are the medians over rounds of the ratios this /
 * other, measured back to back within each round.
 *
 *   node --import tsx bench/compareImport.ts OTHER_CHECKOUT [ROUNDS] [ROWS]
 *
 * Defaults: 8 rounds (after one that warms up both), 527,040 rows.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICE_NODE_OPTIONS } from '../src/heap.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { machineLine, median, printTable, spread } from '../testkit/report.js';
import { type Comparison, reportComparisons, THIS_CHECKOUT } from './lib/abReport.js';
import { endedChildrenCpuMs } from './lib/cpu.js';
import { DURABLE_SETTINGS, IMPORT_REGISTRY, writeYearCsv, YEAR_ROWS } from './lib/importFixture.js';

requirePrerequisites([throwawayPostgres]);

const [other, rounds = '8', rows = String(YEAR_ROWS)] = process.argv.slice(2);
if (!other || !(Number(rounds) > 0) || !(Number(rows) > 0)) {
  console.error('usage: bench/compareImport.ts OTHER_CHECKOUT [ROUNDS] [ROWS]');
  process.exit(2);
}
type Name = 'this' | 'other';
const CHECKOUTS: Record<Name, string> = { this: THIS_CHECKOUT, other: resolve(other) };
const DATABASE = 'bench_compare_import';
interface Sample {
  /** Spawn to exit of `gwapi import measurements`, s. */
  wallS: number;
  /** Its process's CPU, all threads, s. */
  cpuS: number;
  /** Spawn to exit of `gwapi --help`, s. */
  startS: number;
}

interface Run {
  stdout: string;
  wallS: number;
  cpuS: number;
}

/** `gwapi ARGS` of `checkout` against `databaseUrl`, to its end; its output, wall time and CPU. */
async function gwapi(checkout: string, args: string[], databaseUrl: string): Promise<Run> {
  const cpuBefore = endedChildrenCpuMs();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', ...SERVICE_NODE_OPTIONS, join(checkout, 'src/cli.ts'), ...args],
    {
      cwd: checkout,
      // Nothing of this process's environment but what finds programs: the CLI's settings are its defaults.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((done) => child.once('close', () => done()));
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('exit', (exitCode) => done(exitCode));
  });
  // 'exit' comes once the process has been waited for, so its CPU is in this process's children's times.
  const wallS = (performance.now() - started) / 1000;
  const cpuS = (endedChildrenCpuMs() - cpuBefore) / 1000;
  await closed;
  if (code !== 0) throw new Error(`${checkout}: gwapi ${args.join(' ')} exited with ${code}:\n${stderr}`);
  return { stdout, wallS, cpuS };
}

const dir = await mkdtemp(join(tmpdir(), 'gwapi-bench-compare-import-'));
const pg = await startDatabaseServer(DURABLE_SETTINGS);
try {
  console.log(`Import A/B — ${await machineLine()}\n${pg.description}\n`);
  const csv = join(dir, 'year.csv');
  const registry = join(dir, 'registry.json');
  await writeYearCsv(csv, Number(rows));
  await writeFile(registry, JSON.stringify(IMPORT_REGISTRY));
  console.log(
    `${Number(rows).toLocaleString('en-US')} rows, ${((await stat(csv)).size / 1e6).toFixed(1)} MB of CSV; ` +
      `${rounds} rounds after one to warm up\n`,
  );
  const expected = new RegExp(`imported ${Number(rows).toLocaleString('en-US')} rows .*: ([\\d,]+) inserted`);

  async function sample(name: Name): Promise<Sample> {
    const checkout = CHECKOUTS[name];
    const url = await pg.emptyDatabase(DATABASE);
    await gwapi(checkout, ['migrate'], url);
    await gwapi(checkout, ['import', 'registry', registry], url);
    const start = await gwapi(checkout, ['--help'], url);
    await pg.checkpoint();
    const run = await gwapi(checkout, ['import', 'measurements', csv], url);
    const inserted = expected.exec(run.stdout)?.[1];
    if (inserted !== Number(rows).toLocaleString('en-US')) {
      throw new Error(`${checkout}: not every row inserted: ${run.stdout}`);
    }
    return { wallS: run.wallS, cpuS: run.cpuS, startS: start.wallS };
  }

  const samples: Record<Name, Sample[]> = { this: [], other: [] };
  const ratios: Record<keyof Sample, number[]> = { wallS: [], cpuS: [], startS: [] };
  // Round -1 warms up both (tsx's cache of compiled sources, the page cache, PostgreSQL's catalogs).
  for (let round = -1; round < Number(rounds); round++) {
    const order: Name[] = round % 2 === 0 ? ['this', 'other'] : ['other', 'this'];
    const inRound: Partial<Record<Name, Sample>> = {};
    for (const name of order) inRound[name] = await sample(name);
    if (round < 0) continue;
    const a = inRound.this!;
    const b = inRound.other!;
    samples.this.push(a);
    samples.other.push(b);
    for (const field of ['wallS', 'cpuS', 'startS'] as const) ratios[field].push(a[field] / b[field]);
    console.log(
      `round ${round + 1}: ${order.join(' first, ')}; import this ${a.wallS.toFixed(2)} s, ` +
        `other ${b.wallS.toFixed(2)} s`,
    );
  }
  await pg.dropDatabase(DATABASE);

  const medianOf = (name: Name, field: keyof Sample) => median(samples[name].map((s) => s[field]));
  const seconds = (value: number) => `${value.toFixed(2)} s`;
  console.log();
  printTable(
    ['checkout', 'import: wall', 'import: CLI CPU', 'start-up (--help)'],
    (['this', 'other'] as const).map((name) => [
      name === 'this' ? 'this' : other,
      seconds(medianOf(name, 'wallS')),
      seconds(medianOf(name, 'cpuS')),
      seconds(medianOf(name, 'startS')),
    ]),
  );
  console.log(`this / other over ${ratios.wallS.length} rounds:`);
  console.log(`  import, wall time  ${spread(ratios.wallS)}`);
  console.log(`  import, CLI CPU    ${spread(ratios.cpuS)}`);
  console.log(`  start-up alone     ${spread(ratios.startS)}`);
  const row = (metric: string, field: keyof Sample): Comparison => ({
    benchmark: 'import',
    metric,
    unit: 's',
    this: medianOf('this', field),
    other: medianOf('other', field),
    ratios: ratios[field],
  });
  reportComparisons(
    [
      row('wall time (gwapi import measurements)', 'wallS'),
      row('CPU of the CLI process', 'cpuS'),
      row('start-up alone (gwapi --help)', 'startS'),
    ],
    other,
    pg.description,
  );
} finally {
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}

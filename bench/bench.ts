/**
 * `npm run bench`: the one entry point of the benchmarks. Each scenario answers one question that is
 * still open, in a process of its own with its own throwaway database (scenarios must not compete for
 * the cores); questions already answered are decision records in docs/decisions/.
 *
 *   npm run bench -- --list                   # the scenarios, each with its question
 *   npm run bench -- formats                  # one scenario, its defaults
 *   npm run bench -- formats 5                # one scenario with its own arguments (bench/README.md)
 *   npm run bench -- formats,network,sync     # several, one after the other, their defaults
 *   BENCH_ENGINE=both npm run bench -- formats  # on PostgreSQL and on TimescaleDB (testkit/databaseServer.ts)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchEngines } from '../testkit/databaseServer.js';
import { RUNNER_ENV } from '../testkit/prerequisites.js';

/** Each scenario is bench/scenarios/NAME.ts; its arguments are in bench/README.md. */
const SCENARIOS: Record<string, string> = {
  formats:
    'How close to PostgreSQL’s own COPY … TO STDOUT is a year in JSON, CSV and Arrow, one tube and a network?',
  memory: 'Does a server streaming a year, one tube or a network, grow by under 40 MB, flat in the length?',
  network:
    'Is a network in one request as fast per row as one series, and how much faster than tube by tube?',
  client: 'How long does a client wait for a polars data frame of a year, in each format?',
  aggregate: 'How fast is a year’s P1D or PT1H aggregate against the raw year?',
  conditional: 'What does a 304 cost against the 200 of the same series, and of discovery?',
  concurrent: 'Do two year-long streams at once serve more rows per second than one?',
  discovery: 'How many discovery requests does a replica serve against a bare route sending the same bytes?',
  status: 'What do include=status and a status filter that passes every row cost a year, in each format?',
  geojson: 'How long does GeoJSON discovery of 3,000 wells take against JSON discovery?',
  latest:
    'How long does the latest of 3,000 tubes in 10 million rows take against discovery, and against the naive select?',
  import:
    'How close to a bare COPY … FROM STDIN is importing a year of one tube, and a day into compressed history?',
  importers:
    'How long do a BRO GLD, DINO and FEWS file take to import against gwapi import measurements of the same points?',
  largefiles:
    'Does a gigabyte GLD or FEWS file import with the CLI’s memory flat, and with its progress shown?',
  corrections: 'What does a status change or removal of a month inside compressed history cost?',
  sync: 'What does a delta of 1,000 changed rows cost on a large table against a 1,000-row series?',
  limits: 'What do the client limits add to a request, in process and in Redis?',
  scale:
    'Does a billion-row national network on TimescaleDB answer as a table of 10 million does, in how many bytes a row?',
  ogc: 'Does page 100 of /v1/ogc cost what page 1 costs, and its pages what the series and discovery cost?',
  profile:
    'Where does the server spend its CPU on a year-long series, or on discovery under load? (a profile)',
};

const scenarioFile = (name: string) => fileURLToPath(new URL(`./scenarios/${name}.ts`, import.meta.url));

/** `bench/scenarios/NAME.ts ARGS` in a process of its own, to its end; its exit code. */
function run(name: string, args: string[]): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', scenarioFile(name), ...args], {
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

/**
 * Each chosen scenario checks its prerequisites and exits (testkit/prerequisites.ts), so that a missing
 * one is told now rather than an hour into the run: their lines, each once; exit code 2.
 */
async function checkPrerequisites(names: string[]): Promise<void> {
  const lines = new Set<string>();
  let failed = false;
  // One at a time: the machine's cores are for the scenarios, and a check is a start-up.
  for (const name of names) {
    const child = spawn(process.execPath, ['--import', 'tsx', scenarioFile(name)], {
      stdio: ['ignore', 'inherit', 'pipe'],
      env: { ...process.env, [RUNNER_ENV]: 'npm run bench' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    if (code === 0) continue;
    failed = true;
    // Several scenarios needing the same thing say the same line.
    for (const line of stderr.split('\n').filter(Boolean)) lines.add(line);
  }
  for (const line of lines) console.error(line);
  if (failed) process.exit(2);
}

function list(): void {
  const width = Math.max(...Object.keys(SCENARIOS).map((name) => name.length));
  console.log('npm run bench -- SCENARIO [ARG...] | SCENARIO,SCENARIO... | --list\n');
  for (const [name, question] of Object.entries(SCENARIOS))
    console.log(`  ${name.padEnd(width)}  ${question}`);
}

const [first, ...args] = process.argv.slice(2);
if (first === undefined || first === '--list') {
  list();
  process.exit(first === undefined ? 2 : 0);
}
const names = first.split(',');
const unknown = names.filter((name) => !(name in SCENARIOS));
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(', ')}: npm run bench -- --list names them`);
  process.exit(2);
}
if (names.length > 1 && args.length > 0) {
  console.error('arguments go to one scenario: npm run bench -- NAME [ARG...]');
  process.exit(2);
}
try {
  benchEngines();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
await checkPrerequisites(names);
let failed = 0;
for (const name of names) {
  if (names.length > 1) console.log(`\n=== ${name} ===\n`);
  const code = await run(name, args);
  if (code !== 0) {
    console.error(`scenario ${name} exited with ${code}`);
    failed++;
  }
}
process.exit(failed > 0 ? 1 : 0);

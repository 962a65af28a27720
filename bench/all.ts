/**
 * `npm run bench`: every benchmark, one after the other (they must not compete for the cores), each in
 * a process of its own with its own throwaway database. Names pick a subset:
 *
 *   npm run bench                        # all of them
 *   npm run bench -- series discovery    # just these
 *
 * `compare` runs the A/Bs of this checkout against another one instead (bench/compareAll.ts):
 *
 *   npm run bench -- compare OTHER_CHECKOUT [NAME[:ARG...]...]
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RUNNER_ENV } from '../testkit/prerequisites.js';

const ALL = [
  'series',
  'csv',
  'aggregate',
  'arrowWriter',
  'bulkWriters',
  'conditional',
  'storeSize',
  'concurrent',
  'discovery',
  'import',
  'sync',
  'limits',
  'limitsHttp',
  'startPaths',
  'bulk',
  'client',
];
const chosen = process.argv.slice(2);

/** `bench/NAME.ts ARGS` in a process of its own, to its end; its exit code. */
function run(name: string, args: string[] = []): Promise<number> {
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

/**
 * Each chosen benchmark checks its prerequisites and exits (testkit/prerequisites.ts), so that a missing
 * one is told now rather than an hour into the run: their lines, each once; exit code 2.
 */
async function checkPrerequisites(names: string[], runner: string): Promise<void> {
  const lines = new Set<string>();
  let failed = false;
  // One at a time: the machine's cores are for the benchmarks, and a check is a start-up.
  for (const name of names) {
    const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'inherit', 'pipe'],
      env: { ...process.env, [RUNNER_ENV]: runner },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    if (code === 0) continue;
    failed = true;
    // Several benchmarks needing the same thing say the same line.
    for (const line of stderr.split('\n').filter(Boolean)) lines.add(line);
  }
  for (const line of lines) console.error(line);
  if (failed) process.exit(2);
}

if (chosen[0] === 'compare') {
  await checkPrerequisites(['compareAll'], 'npm run bench -- compare');
  process.exit(await run('compareAll', chosen.slice(1)));
}
const unknown = chosen.filter((name) => !ALL.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}: choose from ${ALL.join(', ')}`);
  process.exit(2);
}

const names = chosen.length > 0 ? chosen : ALL;
await checkPrerequisites(names, 'npm run bench');
let failed = 0;
for (const name of names) {
  console.log(`\n=== bench/${name}.ts ===\n`);
  const code = await run(name);
  if (code !== 0) {
    console.error(`bench/${name}.ts exited with ${code}`);
    failed++;
  }
}
process.exit(failed > 0 ? 1 : 0);

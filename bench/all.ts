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

if (chosen[0] === 'compare') process.exit(await run('compareAll', chosen.slice(1)));
const unknown = chosen.filter((name) => !ALL.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}: choose from ${ALL.join(', ')}`);
  process.exit(2);
}

let failed = 0;
for (const name of chosen.length > 0 ? chosen : ALL) {
  console.log(`\n=== bench/${name}.ts ===\n`);
  const code = await run(name);
  if (code !== 0) {
    console.error(`bench/${name}.ts exited with ${code}`);
    failed++;
  }
}
process.exit(failed > 0 ? 1 : 0);

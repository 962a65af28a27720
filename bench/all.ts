/**
 * `npm run bench`: every benchmark, one after the other (they must not compete for the cores), each in
 * a process of its own with its own throwaway database. Names pick a subset:
 *
 *   npm run bench                        # all of them
 *   npm run bench -- series discovery    # just these
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ALL = ['series', 'storeSize', 'concurrent', 'discovery', 'import', 'limits', 'limitsHttp'];
const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !ALL.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}: choose from ${ALL.join(', ')}`);
  process.exit(2);
}

let failed = 0;
for (const name of chosen.length > 0 ? chosen : ALL) {
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  console.log(`\n=== bench/${name}.ts ===\n`);
  const code = await new Promise<number>((resolve) =>
    spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' }).on('exit', (c) =>
      resolve(c ?? 1),
    ),
  );
  if (code !== 0) {
    console.error(`bench/${name}.ts exited with ${code}`);
    failed++;
  }
}
process.exit(failed > 0 ? 1 : 0);

/**
 * bench/'s one entry point: `npm run bench -- --list` names every scenario in bench/scenarios/, each with
 * its question, and refuses a name it does not know. Run as a user runs it, in a process.
 */
import { spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import t from 'tap';

const bench = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'bench/bench.ts', ...args], { encoding: 'utf8' });

t.test('--list names every scenario with its question', async (t) => {
  const listed = bench('--list');
  t.equal(listed.status, 0, listed.stderr);
  const lines = listed.stdout.split('\n').filter((line) => line.startsWith('  '));
  const names = lines.map((line) => line.trim().split(/\s+/)[0]);
  const files = (await readdir('bench/scenarios')).filter((name) => name.endsWith('.ts'));
  t.same(names.toSorted(), files.map((name) => name.replace(/\.ts$/, '')).toSorted());
  for (const line of lines) t.match(line, /^ {2}\w+ +\S.*\?/, `a question: ${line.trim()}`);
});

t.test('an unknown scenario is refused, and nothing runs', async (t) => {
  const refused = bench('series');
  t.equal(refused.status, 2);
  t.match(refused.stderr, 'unknown scenario series: npm run bench -- --list names them');
  t.equal(refused.stdout, '');
});

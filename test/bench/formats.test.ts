/**
 * The formats scenario, the before and after of every change to the engine, runs whole: one round over
 * a network of one well, on the suite's PostgreSQL, as a user starts it. It checks every body's rows and
 * the floor's before it times anything, so a run that ends well means the six documents and both COPYs
 * hold the year. Its figures are not judged here: a shared machine moves them.
 */
import { spawn } from 'node:child_process';
import t from 'tap';

t.test('npm run bench -- formats runs to its table', async (t) => {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the suite with `npm test`');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bench.ts', 'formats', '1', '1'], {
    env: { ...process.env, DATABASE_URL: url },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  t.equal(code, 0, stderr);
  t.match(stdout, /network: 4 tubes × 35,136 rows/);
  for (const kind of ['series', 'network']) {
    t.match(stdout, new RegExp(`^${kind} +total +server CPU`, 'm'), `the ${kind} table`);
  }
  for (const format of ['json', 'csv', 'arrow']) {
    t.match(
      stdout,
      new RegExp(`^${format} +\\d+\\.\\d\\d× +≤ \\d\\.\\d\\d× +(yes|NO) +\\d+\\.\\d\\d×$`, 'm'),
      format,
    );
  }
});

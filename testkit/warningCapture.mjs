/**
 * Loaded with `--import` into every process of `npm test` (test/run.ts: NODE_OPTIONS for the tap files
 * and whatever they start with their environment; testkit/gwapi.ts for each `gwapi` process): with
 * GWAPI_TEST_CAPTURE_DIR set, each process warning (a listener leak, a deprecation, an experimental
 * feature) is written to its `warnings/` folder, as one JSON line naming the process and where the
 * warning was raised, and the suite fails on it at the end (readWarnings in outputCapture.ts). Plain
 * JavaScript: it loads before tsx does. Node still prints the warning as it always does.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.env.GWAPI_TEST_CAPTURE_DIR;
// Only this checkout's processes: another checkout's (a released version's, testkit/previousRelease.ts)
// warnings are that release's, which no change here can mend.
const checkout = fileURLToPath(new URL('..', import.meta.url));
const script = process.argv[1] ?? '';
const ours = !script.startsWith('/') || script.startsWith(checkout);
if (dir && ours) {
  const folder = join(dir, 'warnings');
  const where = process.argv
    .slice(1)
    .map((arg) => (arg.startsWith('/') ? relative(process.cwd(), arg) : arg))
    .join(' ');
  process.on('warning', (warning) => {
    const frames = (warning.stack ?? '')
      .split('\n')
      .slice(1)
      .map((line) => line.trim())
      .filter((line) => line.startsWith('at ') && !/\(node:|^at node:/.test(line));
    mkdirSync(folder, { recursive: true });
    appendFileSync(
      join(folder, String(process.pid)),
      `${JSON.stringify({ process: where, warning: `${warning.name}: ${warning.message}`, at: frames.slice(0, 3) })}\n`,
    );
  });
}

/**
 * Where the service's log lines go when nobody passes a stream: standard output, in batches (one
 * write per line cost a cached request a sixth of its CPU), yet nothing an operator needs waits long.
 * A child process logs and then blocks its event loop; when its lines reach us tells what was
 * written at once, what waited for the batch, and that nothing is lost when it exits.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const LOGGING = fileURLToPath(new URL('../../src/api/plugins/logging.ts', import.meta.url));
const BLOCK_MS = 3000;

interface Arrival {
  line: { msg: string; level: number };
  /** ms before the child exited */
  beforeExit: number;
}

/** Runs `body` (a module body with `logger` in scope) in a child; its lines with when they arrived. */
async function linesOf(body: string): Promise<Arrival[]> {
  const program = `
    import { createLogger } from ${JSON.stringify(LOGGING)};
    const logger = createLogger('info');
    const block = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
    ${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const received: { text: string; at: number }[] = [];
  child.stdout.on('data', (chunk: Buffer) =>
    received.push({ text: chunk.toString(), at: performance.now() }),
  );
  const exitedAt = await new Promise<number>((resolve) =>
    child.on('close', () => resolve(performance.now())),
  );
  return received.flatMap(({ text, at }) =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => ({ line: JSON.parse(line), beforeExit: exitedAt - at })),
  );
}

t.test('request lines are batched, and written when the process exits', async (t) => {
  const lines = await linesOf(`logger.info('first'); logger.info('second'); block(${BLOCK_MS});`);
  t.same(
    lines.map(({ line }) => line.msg),
    ['first', 'second'],
    'both lines, none lost',
  );
  t.ok(
    lines.every(({ beforeExit }) => beforeExit < BLOCK_MS / 2),
    'not written while the process was busy: they waited for the batch',
  );
});

t.test('a warning is written at once, with the lines before it', async (t) => {
  const lines = await linesOf(`logger.info('before'); logger.warn('trouble'); block(${BLOCK_MS});`);
  t.same(
    lines.map(({ line }) => [line.level, line.msg]),
    [
      [30, 'before'],
      [40, 'trouble'],
    ],
  );
  t.ok(
    lines.every(({ beforeExit }) => beforeExit > BLOCK_MS / 2),
    'written while the process was still busy',
  );
});

t.test('a quiet process writes its batch within a second or so', async (t) => {
  const lines = await linesOf(`logger.info('alone'); setTimeout(() => {}, ${BLOCK_MS});`);
  t.same(
    lines.map(({ line }) => line.msg),
    ['alone'],
  );
  t.ok(lines[0]!.beforeExit > BLOCK_MS / 2, 'written by the periodic flush, long before the exit');
});

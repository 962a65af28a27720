/**
 * Where the service's log lines go when nobody passes a stream: standard output, each line written at
 * once (logging.ts says why). A child process logs and then blocks its event loop; when its lines
 * reach us tells whether they were written at once or waited for the event loop.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const LOGGING = fileURLToPath(new URL('../../../src/http/observability/logging.ts', import.meta.url));
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

t.test('every line is written at once, before the process does anything else', async (t) => {
  const lines = await linesOf(
    `logger.info('first'); logger.info('second'); logger.warn('trouble'); block(${BLOCK_MS});`,
  );
  t.same(
    lines.map(({ line }) => [line.level, line.msg]),
    [
      [30, 'first'],
      [30, 'second'],
      [40, 'trouble'],
    ],
  );
  t.ok(
    lines.every(({ beforeExit }) => beforeExit > BLOCK_MS / 2),
    'all of them arrived while the process was still busy',
  );
});

t.test('a line logged just before the process exits is not lost', async (t) => {
  const lines = await linesOf(`logger.info('last words'); process.exit(0);`);
  t.same(
    lines.map(({ line }) => line.msg),
    ['last words'],
  );
});

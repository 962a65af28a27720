/**
 * Where the service's log lines go when nobody passes a stream: standard output, each line written at
 * once (logging.ts says why). A child process logs and then blocks its event loop; when its lines
 * reach us tells whether they were written at once or waited for the event loop. Standard output is
 * a pipe that Node has made non-blocking (as in a service that printed anything), read by a parent that
 * stops reading for a while, or that goes away.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
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

/** Messages of every kind: short, multi-byte (UTF-8 longer than the string), and longer than a pipe holds. */
function messages(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    if (i % 50 === 7) return `${i} ${'grondwaterstand ≈ −1,5 m — '.repeat(4000)}`; // ~120 KB
    return i % 3 === 0 ? `${i} Ĳsselmeer ✓` : `${i}`;
  });
}

/**
 * Runs `body` in a child whose standard output is a pipe to us, with `logger`, `messages` and
 * `writeSync` in scope. The reader pauses for `pauseMs` once the child is ready, so the pipe fills.
 */
function piped(body: string, options: { pauseMs: number; stopReadingAfterBytes?: number }) {
  const program = `
    import { createLogger } from ${JSON.stringify(LOGGING)};
    import { writeSync } from 'node:fs';
    const messages = ${messages.toString()};
    process.stdout; // Node makes the pipe non-blocking, as in a service that printed anything
    const logger = createLogger('info');
    process.stderr.write('ready\\n');
    ${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pause();
  const chunks: Buffer[] = [];
  let received = 0;
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
    if (options.stopReadingAfterBytes !== undefined && received >= options.stopReadingAfterBytes) {
      child.stdout.destroy();
    }
  });
  child.stderr.once('data', () => void sleep(options.pauseMs).then(() => child.stdout.resume()));
  return new Promise<{ code: number | null; output: string; errors: string }>((resolve) =>
    child.on('close', (code) =>
      resolve({ code, output: Buffer.concat(chunks).toString(), errors: Buffer.concat(stderr).toString() }),
    ),
  );
}

t.test('a full pipe is waited for: no line dropped or cut', async (t) => {
  const control = await piped(
    `for (const message of messages(400)) writeSync(1, JSON.stringify({ msg: message }) + '\\n');`,
    { pauseMs: 500 },
  );
  t.not(control.code, 0, 'control: bare writes to this pipe fail while the reader waits');
  t.match(control.errors, /EAGAIN/, 'control: with EAGAIN (the pipe is non-blocking and full)');

  const run = await piped('for (const message of messages(400)) logger.info(message);', { pauseMs: 500 });
  t.equal(run.code, 0, run.errors);
  const received = run.output.split('\n').filter((line) => line !== '');
  t.ok(
    received.length === 400 && received.every((line, i) => JSON.parse(line).msg === messages(400)[i]),
    'every line of 400 (~1 MB, some of 120 KB), whole and in order',
  );
});

t.test('a reader that goes away ends the logging, not the process', async (t) => {
  const run = await piped(
    `for (const message of messages(400)) logger.info(message); process.stderr.write('still running');`,
    { pauseMs: 0, stopReadingAfterBytes: 1 },
  );
  t.equal(run.code, 0, run.errors);
  t.match(run.errors, /still running$/);
});

/**
 * synchronousLines, the log's destination, writing to real descriptors: a file, and standard output of
 * a child process as a pipe that Node has made non-blocking (it does so once anything touches
 * process.stdout), read by a parent that stops reading for a while, and one that goes away.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { synchronousLines } from '../../../src/http/observability/synchronousLines.js';

const MODULE = fileURLToPath(new URL('../../../src/http/observability/synchronousLines.ts', import.meta.url));

/** Lines of every kind: short, multi-byte (UTF-8 longer than the string), and longer than a pipe holds. */
function lines(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    if (i % 50 === 7) return `${i} ${'grondwaterstand ≈ −1,5 m — '.repeat(4000)}\n`; // ~120 KB
    return i % 3 === 0 ? `{"line":${i},"well":"Ĳsselmeer ✓"}\n` : `{"line":${i}}\n`;
  });
}

/** Runs `body` in a child whose standard output is a pipe to us, with `write` and `lines` in scope. */
function child(body: string, options: { pauseMs: number; stopReadingAfterBytes?: number }) {
  const program = `
    import { synchronousLines } from ${JSON.stringify(MODULE)};
    import { writeSync } from 'node:fs';
    const lines = ${lines.toString()};
    process.stdout; // Node makes the pipe non-blocking, as in a service that printed anything
    const write = synchronousLines(1).write;
    process.stderr.write('ready\\n');
    ${body}`;
  const process_ = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process_.stdout.pause();
  const chunks: Buffer[] = [];
  let received = 0;
  const stderr: Buffer[] = [];
  process_.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  process_.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
    if (options.stopReadingAfterBytes !== undefined && received >= options.stopReadingAfterBytes) {
      process_.stdout.destroy();
    }
  });
  // The reader stops for a while once the child starts writing: the pipe fills, the child must wait.
  process_.stderr.once('data', () => void sleep(options.pauseMs).then(() => process_.stdout.resume()));
  return new Promise<{ code: number | null; output: string; errors: string }>((resolve) =>
    process_.on('close', (code) =>
      resolve({
        code,
        output: Buffer.concat(chunks).toString(),
        errors: Buffer.concat(stderr).toString(),
      }),
    ),
  );
}

t.test('to a file: every line whole and in order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gwapi-lines-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'log');
  const fd = openSync(file, 'w');
  const destination = synchronousLines(fd);
  const expected = lines(120);
  for (const line of expected) destination.write(line);
  closeSync(fd);
  t.equal(await readFile(file, 'utf8'), expected.join(''));
});

t.test('a full non-blocking pipe: waited for, nothing dropped or cut', async (t) => {
  const control = await child('for (const line of lines(400)) writeSync(1, line);', { pauseMs: 500 });
  t.not(control.code, 0, 'control: bare writes to this pipe fail while the reader waits');
  t.match(control.errors, /EAGAIN/, 'control: with EAGAIN (the pipe is non-blocking and full)');

  const run = await child('for (const line of lines(400)) write(line);', { pauseMs: 500 });
  t.equal(run.code, 0, run.errors);
  t.ok(run.output === lines(400).join(''), 'every byte of 400 lines (~1 MB, some of 120 KB), in order');
});

t.test('a reader that goes away ends the logging, not the process', async (t) => {
  const run = await child(
    `for (const line of lines(400)) write(line); process.stderr.write('still running');`,
    { pauseMs: 0, stopReadingAfterBytes: 1 },
  );
  t.equal(run.code, 0, run.errors);
  t.match(run.errors, /still running$/);
});

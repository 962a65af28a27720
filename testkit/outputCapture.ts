/**
 * What the suite keeps to scan for API keys at its end (test/helpers/secrets.ts, scanCaptures): with
 * GWAPI_TEST_CAPTURE_DIR set (`npm test` sets it), every log line of an app a test builds, the output of
 * every `gwapi` process a test or drill starts, and every key a fixture creates are written there.
 * Without it (a drill or benchmark run on its own) nothing is kept. Process warnings are kept there too,
 * by warningCapture.mjs, loaded into each process of the suite (WARNING_CAPTURE).
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const CAPTURE_DIR_VARIABLE = 'GWAPI_TEST_CAPTURE_DIR';

/** The module that records a process's warnings, for `--import` (node's options or NODE_OPTIONS). */
export const WARNING_CAPTURE = new URL('./warningCapture.mjs', import.meta.url).href;

/** The node options that load WARNING_CAPTURE into a process, when the suite captures (else none). */
export const warningCaptureOptions = (): string[] =>
  process.env[CAPTURE_DIR_VARIABLE] ? [`--import=${WARNING_CAPTURE}`] : [];

export interface CapturedWarning {
  /** The process's arguments: a test file, or `src/cli.ts migrate`. */
  process: string;
  /** `MaxListenersExceededWarning: Possible EventEmitter memory leak detected. …` */
  warning: string;
  /** Where it was raised: the first frames outside Node's own. */
  at: string[];
}

/** Every warning warningCapture.mjs wrote to `dir`. */
export function readWarnings(dir: string): CapturedWarning[] {
  const folder = join(dir, 'warnings');
  let files: string[];
  try {
    files = readdirSync(folder);
  } catch {
    return [];
  }
  return files.flatMap((file) =>
    readFileSync(join(folder, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as CapturedWarning),
  );
}

/** Output of these commands shows a key by design: `keys create` on its first line, `demo` in its banner. */
export type Source = 'log' | 'process' | 'keys-create' | 'demo';

const captureDir = () => process.env[CAPTURE_DIR_VARIABLE];

let files = 0;

/** A file of its own per stream: test files run in parallel processes. */
function newFile(source: Source, label: string): string | undefined {
  const dir = captureDir();
  if (!dir) return undefined;
  mkdirSync(join(dir, source), { recursive: true });
  return join(dir, source, `${process.pid}-${++files}-${label.replace(/[^\w.-]+/g, '_').slice(0, 60)}`);
}

/** A sink for the log lines of one app: call it with every chunk the app writes. */
export function logCapture(label: string): (chunk: string) => void {
  const file = newFile('log', label);
  return file ? (chunk) => appendFileSync(file, chunk) : () => {};
}

/** Copies standard output and error of a `gwapi` process started with `args`. */
export function captureProcess(child: ChildProcess, args: readonly string[]): void {
  const source: Source =
    args[0] === 'keys' && args[1] === 'create' ? 'keys-create' : args[0] === 'demo' ? 'demo' : 'process';
  const label = `${args.slice(0, 2).join('-')}-${child.pid}`;
  const stdout = newFile(source, `${label}.stdout`);
  // Standard error never shows a key, whatever the command.
  const stderr = newFile('process', `${label}.stderr`);
  if (stdout) child.stdout?.on('data', (chunk: Buffer) => appendFileSync(stdout, chunk));
  if (stderr) child.stderr?.on('data', (chunk: Buffer) => appendFileSync(stderr, chunk));
}

/** Writes down a key a test created, so that fragments of it are looked for too. */
export function rememberKey(key: string): void {
  const dir = captureDir();
  if (!dir) return;
  mkdirSync(join(dir, 'keys'), { recursive: true });
  appendFileSync(join(dir, 'keys', String(process.pid)), `${key}\n`);
}

/**
 * `gwapi` as the operator runs it, from the TypeScript sources: any command as a process, and
 * `gwapi serve` as a replica of its own on a free port, its JSON log lines collected. Tests, benchmarks
 * and drills start their servers with it.
 */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAPTURE_DIR_VARIABLE, warningCaptureOptions } from './outputCapture.js';
import { type Owner, stopProcess, untilReady } from './processes.js';

export const GWAPI_CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

export interface GwapiOptions {
  /** Environment on top of a minimal one (PATH, HOME); the caller's settings do not leak in. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Another checkout to run `gwapi` of (e.g. the previous release: testkit/previousRelease.ts). */
  root?: string;
}

/** Starts `gwapi ARGS` (tsx on src/cli.ts) and returns the running process. */
export function spawnGwapi(args: string[], options: GwapiOptions = {}): ChildProcessWithoutNullStreams {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = value;
  const cli = options.root ? join(options.root, 'src', 'cli.ts') : GWAPI_CLI;
  // In the suite, its warnings are recorded like every other process's (outputCapture.ts).
  const capture = process.env[CAPTURE_DIR_VARIABLE];
  if (capture) env[CAPTURE_DIR_VARIABLE] = capture;
  return spawn(process.execPath, [...warningCaptureOptions(), '--import', 'tsx', cli, ...args], {
    env,
    cwd: options.cwd ?? options.root ?? fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

export interface GwapiOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a `gwapi` command printed, and its exit code, once it has ended; `input` is its standard input. */
export function outcome(
  child: ChildProcessWithoutNullStreams,
  input: string | Buffer = '',
): Promise<GwapiOutcome> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export interface LogLine {
  level: number;
  msg: string;
}

export interface Replica {
  /** `http://127.0.0.1:PORT` */
  base: string;
  child: ChildProcessWithoutNullStreams;
  /** Every log line written so far. */
  logs: LogLine[];
  /** Sends `signal` and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** pino's numeric levels. */
export const INFO = 30;
export const WARN = 40;

/** How long a replica may take to start on a busy machine (tsx compiles the sources first). */
const START_TIMEOUT_MS = 60_000;

export interface ReplicaOptions {
  /** Stops the replica when it ends (a test); registered at once, so one that never listens stops too. */
  owner?: Owner;
  /** Sees the process as soon as it is spawned (the test suite copies its output for the key scan). */
  watch?: (child: ChildProcess, args: string[]) => void;
  /** false: log lines after the listening line are dropped unread (a benchmark's load would pile up). */
  keepLogs?: boolean;
  /** Serve another checkout (GwapiOptions.root). */
  root?: string;
}

/** `gwapi serve` with `env` on a free port; resolves once it listens. */
export async function spawnReplica(
  env: Record<string, string | undefined>,
  options: ReplicaOptions = {},
): Promise<Replica> {
  const args = ['serve'];
  const child = spawnGwapi(args, {
    env: { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    root: options.root,
  });
  options.watch?.(child, args);
  let stopping = false;
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    stopping = true;
    return stopProcess(child, signal);
  };
  options.owner?.teardown(() => stop());
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A server that fails by itself under a test is the failure to explain: its last words go to the
  // test's own standard error, since the test itself sees only refused connections.
  child.once('exit', (code) => {
    if (stopping || !code) return;
    const lastLines = logs.slice(-5).map((line) => JSON.stringify(line));
    process.stderr.write(
      `gwapi serve (pid ${child.pid}) exited by itself with code ${code}:\n${stderr.slice(-4000)}\n${lastLines.join('\n')}\n`,
    );
  });

  const logs: LogLine[] = [];
  const keep = (line: string) => {
    const parsed = JSON.parse(line) as LogLine & { address?: string };
    logs.push(parsed);
    return parsed.address;
  };
  const base = await untilReady(child, keep, {
    what: 'gwapi serve',
    timeoutMs: START_TIMEOUT_MS,
    afterReady: options.keepLogs === false ? undefined : keep,
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${stderr}`);
  });
  return { base, child, logs, stop };
}

/** The messages of `replica`'s log lines that match `pattern`, with their levels. */
export function logged(replica: Replica, pattern: RegExp): LogLine[] {
  return replica.logs.filter((line) => pattern.test(line.msg));
}

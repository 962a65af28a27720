/** Runs `gwapi` as the operator would: a real process, from the TypeScript sources. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { captureProcess } from './secrets.js';

export const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Environment on top of a minimal one (PATH, HOME); the caller's settings do not leak in. */
  env?: Record<string, string | undefined>;
  /** Written to standard input, which is then closed. */
  input?: string | Buffer;
  cwd?: string;
}

/** Starts `gwapi` (tsx on src/cli.ts) and returns the running process, for long-running commands. */
export function spawnCli(
  args: string[],
  options: Omit<CliOptions, 'input'> = {},
): ChildProcessWithoutNullStreams {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env,
    cwd: options.cwd ?? fileURLToPath(new URL('../..', import.meta.url)),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Everything a gwapi process says is checked for keys at the end of the suite.
  captureProcess(child, args);
  return child;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

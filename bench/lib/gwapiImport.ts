/**
 * `gwapi import …` as an operator runs it, in a process of its own (tsx on src/cli.ts, testkit/gwapi.ts),
 * timed from start to exit; on a terminal of its own (util-linux `script`, a pseudo-terminal) when its
 * progress line is wanted, and with its resident memory and its place in the input file sampled from
 * /proc while it runs.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { GWAPI_CLI, outcome, spawnGwapi } from '../../testkit/gwapi.js';
import { command } from '../../testkit/prerequisites.js';
import { childPids, peakMb, residentMb } from '../../testkit/processes.js';

/** `script`, which gives the command a terminal (Debian's bsdutils has it). */
export const scriptCommand = command('script', 'bsdutils');

export interface Sample {
  /** Since the process started. */
  ms: number;
  rssMb: number;
  /** The kernel's peak resident set so far (VmHWM). */
  peakMb: number;
  /**
   * Bytes read since the input file was opened, while it is open; undefined before and after. The
   * CLI's other reads in that time are its database's replies, small beside the file.
   */
  read: number | undefined;
}

export interface ImportRun {
  code: number | null;
  seconds: number;
  /** Standard output; on a terminal, everything the terminal showed (standard error too). */
  output: string;
  stderr: string;
  samples: Sample[];
}

const shellQuoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Whether `pid` has `file` open. */
function hasOpen(pid: number, file: string): boolean {
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === file) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** Bytes `pid` has read so far, through any descriptor (its files are read at offsets, `pread`). */
const bytesRead = (pid: number) =>
  Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);

/**
 * `gwapi import ARGS` against `databaseUrl`, to its exit. `terminal`: on a pseudo-terminal, so that it
 * shows its progress line as at an operator's prompt. `sample`: the input file whose place to follow,
 * with the resident memory, every `intervalMs`.
 */
export async function gwapiImport(
  args: string[],
  databaseUrl: string,
  options: { terminal?: boolean; sample?: string; intervalMs?: number } = {},
): Promise<ImportRun> {
  const env = { DATABASE_URL: databaseUrl };
  const started = performance.now();
  const samples: Sample[] = [];
  if (!options.terminal) {
    const child = spawnGwapi(['import', ...args], { env });
    const ended = outcome(child);
    if (options.sample) void follow(child.pid!, options.sample, options.intervalMs ?? 100, samples, ended);
    const { code, stdout, stderr } = await ended;
    return { code, seconds: (performance.now() - started) / 1000, output: stdout, stderr, samples };
  }
  // `exec`: the shell becomes gwapi, so that the terminal's one process is the one measured.
  const line = [process.execPath, '--import', 'tsx', GWAPI_CLI, 'import', ...args].map(shellQuoted).join(' ');
  const child = spawn(
    'script',
    ['--quiet', '--flush', '--return', '--command', `exec ${line}`, '/dev/null'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
  if (options.sample) {
    let pid: number | undefined;
    while (pid === undefined && child.exitCode === null) {
      pid = childPids(child.pid!)[0];
      if (pid === undefined) await sleep(5);
    }
    if (pid !== undefined) void follow(pid, options.sample, options.intervalMs ?? 100, samples, ended);
  }
  const code = await ended;
  return { code, seconds: (performance.now() - started) / 1000, output, stderr, samples };
}

/** Samples `pid` until `ended` settles (or the process is gone). */
async function follow(
  pid: number,
  file: string,
  intervalMs: number,
  samples: Sample[],
  ended: Promise<unknown>,
): Promise<void> {
  let done = false;
  void ended.then(() => (done = true));
  const started = performance.now();
  let readBefore: number | undefined;
  while (!done) {
    try {
      const open = hasOpen(pid, file);
      const read = bytesRead(pid);
      if (open) readBefore ??= read;
      samples.push({
        ms: performance.now() - started,
        rssMb: residentMb(pid),
        peakMb: peakMb(pid),
        read: open ? read - readBefore! : undefined,
      });
    } catch {
      return; // it has exited
    }
    await sleep(intervalMs);
  }
}

/**
 * The progress lines a terminal showed, in order: each is written over the one before (`\r\x1b[K…`),
 * and the last such clearing removes the line before the report.
 */
export const progressLines = (output: string): string[] =>
  output
    .split('\r\x1b[K')
    .slice(1, -1)
    .map((text) => text.trim());

/**
 * What every throwaway server of the testkit does with its process: wait for the line that says it is
 * ready, stop it and wait for its end, and read what the kernel knows of it in /proc (Linux): resident
 * memory, CPU time, children.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** What owns a throwaway server and ends it: a tap test, or a script's own list of teardowns. */
export interface Owner {
  teardown(done: () => unknown): void;
}

export interface ReadyOptions {
  /** What the process is, for the error message. */
  what: string;
  timeoutMs: number;
  /** Which output to read; standard output alone unless told. */
  streams?: ('stdout' | 'stderr')[];
  /** Why it failed to spawn, as the caller would explain it (e.g. what to install). */
  spawnError?: (error: Error) => string;
  /** Gets every line after the ready one (the rest of its chunk too); without it they are not read. */
  afterReady?: (line: string) => void;
}

/**
 * Resolves with what `ready` makes of the first output line it accepts. Rejects, with the tail of the
 * output, when the process exits first, cannot be spawned, or is not ready within `timeoutMs`: a
 * test must fail with the server's own words, not hang.
 */
export function untilReady<T>(
  child: ChildProcess,
  ready: (line: string) => T | undefined,
  options: ReadyOptions,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let output = '';
    let settled = false;
    const settle = (result: { value: T } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if ('value' in result) resolve(result.value);
      else reject(new Error(`${options.what} ${result.error}${output ? `:\n${output}` : ''}`));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle({ error: `was not ready within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    child.once('error', (error) =>
      settle({ error: options.spawnError?.(error) ?? `could not be started (${error.message})` }),
    );
    child.once('exit', (code, signal) => settle({ error: `exited (${code ?? signal}) before it was ready` }));
    const streams = (options.streams ?? ['stdout']).flatMap((name) => child[name] ?? []);
    const partial = new Map<unknown, string>();
    const read = function (this: NodeJS.ReadableStream, chunk: Buffer) {
      const lines = ((partial.get(this) ?? '') + chunk.toString()).split('\n');
      partial.set(this, lines.pop() ?? '');
      for (const line of lines) {
        if (settled) {
          options.afterReady?.(line);
          continue;
        }
        // Only a tail is kept: some servers log every connection.
        output = `${output}${line}\n`.slice(-8000);
        const value = ready(line);
        if (value !== undefined) settle({ value });
      }
      // Unless the caller reads on, the output flows away unread from here on.
      if (settled && !options.afterReady) for (const stream of streams) stream.off('data', read).resume();
    };
    for (const stream of streams) stream.on('data', read);
  });
}

/** Resolves when the process has ended (at once if it has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => child.once('exit', () => resolve()));
}

/** Sends `signal` unless the process has ended already, and resolves when it has. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const ended = exited(child);
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  return ended;
}

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Fields of /proc/PID/stat after the command, which may hold spaces and parentheses. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Children of `parent`. */
export function childPids(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(entry)[1]) === parent) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process, all threads, ms (10 ms resolution); 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const fields = statFields(pid);
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

const statusMb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Current resident set, MB. */
export const residentMb = (pid: number) => statusMb(pid, 'VmRSS');

/** Highest resident set since the process started or since resetPeakMb, MB. */
export const peakMb = (pid: number) => statusMb(pid, 'VmHWM');

/**
 * Writing 5 to clear_refs resets the kernel's peak-RSS counter (VmHWM), so a peak is read from the
 * kernel instead of being sampled.
 */
export const resetPeakMb = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/**
 * A benchmark server (benchServer.ts) in a child process, and what the parent measures of it: its
 * resident memory, exactly, through /proc. Writing 5 to clear_refs resets the kernel's peak-RSS
 * counter (VmHWM), so "peak during this request" is read from the kernel instead of being sampled.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ParentMessage, ServerMessage } from './benchServer.js';
import type { FloorRequest } from './floor.js';

const ENTRY = fileURLToPath(new URL('./benchServer.ts', import.meta.url));

export interface ServerProcess {
  base: string;
  pid: number;
  /** CPU time the process has used so far, all threads (user + system), ms; 10 ms resolution. */
  cpuMs(): number;
  /** Current resident set, MB. */
  residentMb(): number;
  /** Starts a new peak measurement. */
  resetPeak(): void;
  /** Highest resident set since resetPeak(), MB. */
  peakMb(): number;
  /** Runs the floor read in the server process; its duration (ms) as the server measured it. */
  floor(request: FloorRequest): Promise<{ ms: number; rows: number }>;
  stop(): Promise<void>;
}

const statusField = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** utime + stime of /proc/PID/stat (fields 14 and 15, after the parenthesised command name). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;

export async function startServerProcess(
  kind: 'api' | 'bare',
  databaseUrl = '',
  options: { nodeArgs?: string[] } = {},
): Promise<ServerProcess> {
  const child: ChildProcess = fork(ENTRY, [kind, databaseUrl], {
    execArgv: ['--import', 'tsx', ...(options.nodeArgs ?? [])],
    // Log lines go where a production server's would go if nobody read them.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const messages: ((message: ServerMessage) => void)[] = [];
  child.on('message', (message: ServerMessage) => messages.shift()?.(message));
  const next = () =>
    new Promise<ServerMessage>((resolve, reject) => {
      messages.push(resolve);
      child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    });
  const listening = await next();
  if (listening.type !== 'listening') throw new Error(`bench server failed: ${JSON.stringify(listening)}`);
  const pid = child.pid!;
  return {
    base: listening.base,
    pid,
    cpuMs: () => cpuMs(pid),
    residentMb: () => statusField(pid, 'VmRSS'),
    resetPeak: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    peakMb: () => statusField(pid, 'VmHWM'),
    async floor(request) {
      const answer = next();
      child.send({ type: 'floor', request } satisfies ParentMessage);
      const message = await answer;
      if (message.type !== 'floor') throw new Error(`floor failed: ${JSON.stringify(message)}`);
      return message;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * `gwapi serve` as a replica of its own: a real process on a free port, its JSON log lines collected;
 * in a test, stopped (SIGTERM) when the test ends unless the test killed it first. Benchmarks use it
 * too (bench/limits-http.ts).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Test } from 'tap';
import { spawnCli } from './cli.js';

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

/** A replica stopped when `t` ends. */
export async function startReplica(t: Test, env: Record<string, string | undefined>): Promise<Replica> {
  let stop = async () => {};
  t.teardown(() => stop());
  return spawnReplica(env, { onSpawn: (stopReplica) => (stop = stopReplica) });
}

export interface SpawnOptions {
  /** Gets `stop` at once, before the replica listens. */
  onSpawn?: (stop: () => Promise<void>) => void;
  /** false: log lines after the listening line are dropped unread (a benchmark's load would pile up). */
  keepLogs?: boolean;
}

/** A replica its caller stops. */
export async function spawnReplica(
  env: Record<string, string | undefined>,
  options: SpawnOptions = {},
): Promise<Replica> {
  const child = spawnCli(['serve'], { env: { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env } });
  const logs: LogLine[] = [];
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  options.onSpawn?.(() => stop());
  let listening = false;

  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gwapi serve did not listen within ${START_TIMEOUT_MS} ms: ${stdout}${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      if (listening && options.keepLogs === false) return;
      stdout += chunk.toString();
      const lines = stdout.split('\n');
      stdout = lines.pop() ?? '';
      for (const line of lines) {
        const parsed = JSON.parse(line) as LogLine & { address?: string };
        logs.push(parsed);
        if (parsed.address) {
          listening = true;
          clearTimeout(timer);
          resolve(parsed.address);
        }
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`gwapi serve exited before listening: ${stdout}${stderr}`));
    });
  });
  return { base, child, logs, stop };
}

/** The messages of `replica`'s log lines that match `pattern`, with their levels. */
export function logged(replica: Replica, pattern: RegExp): LogLine[] {
  return replica.logs.filter((line) => pattern.test(line.msg));
}

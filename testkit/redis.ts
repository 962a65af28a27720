/**
 * A throwaway `redis-server` (or Sentinel) on a free loopback port, with persistence off: the suite's
 * shared Redis, a test's own one to stop and start under a running service, and the benchmarks' and
 * drills' Redis when no REDIS_URL is given.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../src/db/embedded.js';
import { stopProcess, untilReady } from './processes.js';

export interface RedisServer {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `extraArgs`, e.g. `['--replicaof', '127.0.0.1', '6379']`. */
export async function startRedis(port?: number, extraArgs: string[] = []): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await started(child, 'Ready to accept connections');
  return serverOn(chosen, child);
}

/**
 * A Sentinel watching the master at `masterPort` as `name`, quick to act (a master silent for 1 s is
 * down; a quorum of one). Sentinel rewrites its configuration file, so it gets one of its own.
 */
export async function startSentinel(masterPort: number, name: string): Promise<RedisServer> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'gwapi-sentinel-'));
  const config = join(dir, 'sentinel.conf');
  await writeFile(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      '',
    ].join('\n'),
  );
  const child = spawn('redis-server', [config, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await started(child, '+monitor master');
  const server = serverOn(port, child);
  return { ...server, stop: () => server.stop().then(() => rm(dir, { recursive: true, force: true })) };
}

/**
 * The Redis at `url`, or a throwaway one when none is given (then stopped by `stop`). `pid` is the
 * throwaway server's, whose CPU time a benchmark may measure.
 */
export async function redisOrThrowaway(
  url: string | undefined,
): Promise<{ url: string; pid?: number; stop(): Promise<void> }> {
  if (url) return { url, stop: async () => {} };
  const redis = await startRedis();
  return { url: redis.url, pid: redis.process.pid, stop: redis.stop };
}

function started(child: ChildProcess, readyLine: string): Promise<void> {
  return untilReady(child, (line) => (line.includes(readyLine) ? true : undefined), {
    what: 'redis-server',
    timeoutMs: 30_000,
    spawnError: (error) =>
      `cannot be started (${error.message}): install it (apt-get install redis-server) or set TEST_REDIS_URL`,
  }).then(() => {});
}

function serverOn(port: number, child: ChildProcess): RedisServer {
  return { url: `redis://127.0.0.1:${port}`, port, process: child, stop: () => stopProcess(child) };
}

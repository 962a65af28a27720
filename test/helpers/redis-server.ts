/** A throwaway `redis-server` (or Sentinel) on a free loopback port, with persistence off. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/db/embedded.js';

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
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
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

function started(child: ChildProcess, readyLine: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    child.on('error', (error) =>
      reject(
        new Error(
          `cannot start redis-server (${error.message}): install it (apt-get install redis-server) or set TEST_REDIS_URL`,
        ),
      ),
    );
    child.on('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(readyLine)) {
        child.stdout?.resume();
        resolve();
      }
    });
  });
}

function serverOn(port: number, child: ChildProcess): RedisServer {
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

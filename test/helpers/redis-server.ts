/** A throwaway `redis-server` on a free loopback port, with persistence off. */
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../src/db/embedded.js';

export interface RedisServer {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startRedis(port?: number): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
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
      if (output.includes('Ready to accept connections')) resolve();
    });
  });
  child.stdout?.resume();
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

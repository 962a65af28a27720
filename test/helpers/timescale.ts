/**
 * Real TimescaleDB code without Docker: PGlite built with TimescaleDB 2.23 (PostgreSQL 17 in wasm) in a
 * child process, reachable over TCP by postgres.js (see timescale-server.ts).
 *
 * What a client must know about this server (pglite-socket 0.0.20):
 * - ONE connection at a time: further connections wait in a queue (up to 60 s, then they are dropped)
 *   until the first one closes, so a pool must have `max: 1` or its second connection hangs.
 * - Each TCP read is handed to PGlite as if it were whole protocol messages: a message larger than a
 *   socket read (~64 KiB, e.g. a bulk INSERT with thousands of parameters) crashes the wasm backend.
 *   Generate bulk data on the server (`generate_series`) instead of sending it.
 * - Startup parameters are ignored (the session's TimeZone is the server's, GMT, not the UTC that
 *   connect() asks for); timestamptz text output is the same `+00` form either way.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface TimescaleServer {
  url: string;
  stop(): Promise<void>;
}

const SERVER_SCRIPT = fileURLToPath(new URL('./timescale-server.ts', import.meta.url));
/** Loading the wasm module and unpacking the extension takes a few seconds; a busy CI machine, more. */
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;

export async function startTimescale(): Promise<TimescaleServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_SCRIPT], {
    // stdin is the child's lifeline: when this process ends, however it ends, the child sees EOF and stops.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`PGlite/TimescaleDB did not start within ${START_TIMEOUT_MS} ms: ${stderr}`));
    }, START_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`PGlite/TimescaleDB exited (${code ?? signal}) before listening: ${stderr}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve(Number(match[1]));
    });
  });

  let stopping = false;
  child.once('exit', (code, signal) => {
    // A crash of the wasm backend shows in the test only as a closed connection: say why.
    if (!stopping) process.stderr.write(`PGlite/TimescaleDB died (${code ?? signal}): ${stderr}\n`);
  });

  return {
    // PGlite has no authentication and one database; user and password are only there for the URL.
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(killer);
    },
  };
}

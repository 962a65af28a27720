/**
 * Real TimescaleDB code without Docker: PGlite built with TimescaleDB 2.23 (PostgreSQL 17 in wasm) in a
 * child process, reachable over TCP by postgres.js (see timescaleServer.ts).
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
import { fileURLToPath } from 'node:url';
import { exited, untilReady } from './processes.js';

export interface TimescaleServer {
  url: string;
  stop(): Promise<void>;
}

const SERVER_SCRIPT = fileURLToPath(new URL('./timescaleServer.ts', import.meta.url));
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
  const port = await untilReady(child, (line) => /^listening (\d+)$/.exec(line)?.[1], {
    what: 'PGlite/TimescaleDB',
    timeoutMs: START_TIMEOUT_MS,
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${stderr}`);
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
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited(child);
      clearTimeout(killer);
    },
  };
}

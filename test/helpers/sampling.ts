/**
 * Memory of a server that streams: `gwapi serve` in a process of its own with a heap too small to
 * hold a large body at once, and a response read while sampling that process's resident memory.
 */
import { request } from 'node:http';
import type { Test } from 'tap';
import { residentMb } from '../../testkit/processes.js';
import { startReplica } from './serve.js';

/**
 * Growth of resident memory allowed while a large body streams: room for V8's young generation, which
 * grows to its working size within any stream's first weeks (bench/README.md, "Series"), but not for
 * the body or its rows.
 */
export const GROWTH_BOUND_MB = 40;

/** A server on `databaseUrl` whose old generation a buffered year (body and rows) would not fit beside. */
export async function startTightServer(t: Test, databaseUrl: string) {
  const replica = await startReplica(t, {
    DATABASE_URL: databaseUrl,
    // The young generation as the image bounds it (Dockerfile): Node 24's default one, up to 3 × 64 MB,
    // makes V8 run one full collection after another beside so small an old generation, and RSS grow
    // with it.
    NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=16',
  });
  // A server that dies of heap exhaustion says so there.
  replica.child.stderr.pipe(process.stderr);
  return replica;
}

/** Reads a whole response as fast as it comes; returns it and the largest server RSS seen meanwhile. */
export function fetchWhileSampling(url: string, key: string, pid: number) {
  return new Promise<{ status: number; body: string; peakMb: number }>((resolve, reject) => {
    let peakMb = residentMb(pid);
    const sampler = setInterval(() => {
      peakMb = Math.max(peakMb, residentMb(pid));
    }, 20);
    const req = request(url, { headers: { 'x-api-key': key }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearInterval(sampler);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), peakMb });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

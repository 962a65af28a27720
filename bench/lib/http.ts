/** A GET that reads the whole body as it arrives and times it: first byte, last byte, bytes. */
import { request } from 'node:http';

export interface Timed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Request sent → first byte of the body, ms. */
  firstByteMs: number;
  /** Request sent → last byte of the body, ms. */
  totalMs: number;
  bytes: number;
  /** The body, only when asked for (keeping it costs the client memory and time). */
  body?: Buffer;
}

/** `onChunk` sees every chunk of the body as it arrives (to check a body too large to keep). */
export function timedGet(
  url: string,
  headers: Record<string, string>,
  keepBody = false,
  onChunk?: (chunk: Buffer) => void,
): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = Number.NaN;
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        if (keepBody) chunks.push(chunk);
        onChunk?.(chunk);
      });
      res.on('end', () => {
        const totalMs = performance.now() - started;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          firstByteMs,
          totalMs,
          bytes,
          ...(keepBody ? { body: Buffer.concat(chunks) } : {}),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A GET for long-running load: over a keep-alive agent, the body counted rather than kept (a year is
 * tens of megabytes, and the load generator shares two cores with the server it loads), only its last
 * bytes kept to tell a whole body from a cut one. Small bodies can be kept whole to be checked. A request
 * can be left on purpose (after its first chunk, or after some bytes), which is not an error; the server
 * cutting a response, a socket error or a stall is.
 */
import { type Agent, type IncomingHttpHeaders, request } from 'node:http';
import { createBrotliDecompress } from 'node:zlib';

export interface CountedGetOptions {
  /**
   * Leave (destroy the socket) once `afterBytes` body bytes have arrived (1: after the first chunk);
   * with `when`, hold the response there unread (the server's writes back up) until it resolves.
   */
  leave?: { afterBytes: number; when?: Promise<unknown> };
  /** Called when the first body bytes arrive. */
  onBodyStart?: () => void;
  /** Keep the whole (decoded) body: only for small responses. */
  keepBody?: boolean;
  /** The body is brotli-compressed: count and check it decompressed. */
  brotli?: boolean;
  /** No byte for this long fails the request. */
  stallMs: number;
}

export interface CountedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Decoded body bytes that arrived. */
  bytes: number;
  /** Whether the whole message arrived (false when cut by the server or left by us). */
  complete: boolean;
  /** We left on purpose. */
  left: boolean;
  /** The last bytes of the decoded body (up to 16). */
  tail: string;
  body?: Buffer;
}

const TAIL_BYTES = 16;

export function countedGet(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  options: CountedGetOptions,
): Promise<CountedResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let tail = Buffer.alloc(0);
      let left = false;
      let settled = false;
      const finish = (complete: boolean) => {
        if (settled) return;
        settled = true;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes,
          complete,
          left,
          tail: tail.toString('latin1'),
          ...(options.keepBody ? { body: Buffer.concat(chunks) } : {}),
        });
      };
      const count = (chunk: Buffer) => {
        bytes += chunk.length;
        tail = Buffer.concat([tail, chunk.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES);
        if (options.keepBody) chunks.push(chunk);
      };
      const decoded = options.brotli ? res.pipe(createBrotliDecompress()) : res;
      decoded.on('data', count);
      // The raw bytes decide when to leave: what a client that gives up mid-download sees.
      let rawBytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (rawBytes === 0) options.onBodyStart?.();
        rawBytes += chunk.length;
        if (options.leave && rawBytes >= options.leave.afterBytes && !left) {
          left = true;
          res.pause();
          void (options.leave.when ?? Promise.resolve()).then(() => {
            req.destroy();
            finish(false);
          });
        }
      });
      decoded.on('error', (error) => {
        if (left || settled) return;
        settled = true;
        reject(new Error(`undecodable body: ${error.message}`));
      });
      // res.complete: the whole message arrived (chunked terminator or Content-Length reached).
      if (options.brotli) decoded.on('end', () => finish(res.complete));
      // A cut shows as res.complete false on close; the 'error' it also emits says no more.
      res.on('error', () => {});
      res.on('close', () => {
        if (!options.brotli || !res.complete) finish(res.complete);
      });
    });
    req.setTimeout(options.stallMs, () => req.destroy(new Error(`no byte for ${options.stallMs} ms`)));
    // After a deliberate leave the promise is settled already and this changes nothing.
    req.on('error', reject);
    req.end();
  });
}

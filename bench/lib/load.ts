/**
 * A small HTTP/1.1 load generator: `connections` keep-alive sockets, each sending the same GET as soon
 * as the previous response is complete, for `seconds`. Raw sockets and prebuilt request bytes keep its
 * own cost per request low (it shares the machine with the server it measures), and it is the same
 * for every target it is compared on. Responses must carry Content-Length (no chunked bodies).
 */
import { connect, type Socket } from 'node:net';
import { median } from '../../testkit/report.js';

export interface LoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Body bytes of one response. */
  bodyBytes: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export async function load(
  url: string,
  headers: Record<string, string>,
  options: { connections: number; seconds: number },
): Promise<LoadResult> {
  const { hostname, port, pathname, search } = new URL(url);
  const request = Buffer.from(
    `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      '\r\n',
  );
  const latencies: number[] = [];
  let bodyBytes = 0;
  const deadline = performance.now() + options.seconds * 1000;

  const worker = () =>
    new Promise<void>((resolve, reject) => {
      // Only a response's head is kept; its body is counted off as it arrives.
      let head: Buffer = Buffer.alloc(0);
      let bodyLeft = -1;
      let sentAt = 0;
      const send = () => {
        if (performance.now() >= deadline) {
          socket.end();
          return resolve();
        }
        sentAt = performance.now();
        socket.write(request);
      };
      const received = (chunk: Buffer) => {
        let rest = chunk;
        while (rest.length > 0) {
          if (bodyLeft < 0) {
            const joined = head.length === 0 ? rest : Buffer.concat([head, rest]);
            const end = joined.indexOf(HEADER_END);
            if (end < 0) {
              head = Buffer.from(joined); // a copy: the read buffer is reused
              return;
            }
            const text = joined.subarray(0, end).toString('latin1');
            if (!text.startsWith('HTTP/1.1 200')) return reject(new Error(text.split('\r\n')[0]));
            const length = /\r\ncontent-length: *(\d+)/i.exec(text);
            if (!length) return reject(new Error('a response without Content-Length'));
            bodyBytes = Number(length[1]);
            bodyLeft = bodyBytes;
            rest = joined.subarray(end + HEADER_END.length);
            head = Buffer.alloc(0);
          }
          const taken = Math.min(bodyLeft, rest.length);
          bodyLeft -= taken;
          rest = rest.subarray(taken);
          if (bodyLeft > 0) return;
          latencies.push(performance.now() - sentAt);
          bodyLeft = -1;
          send();
        }
      };
      // Every read lands in one buffer of this connection's, as in a C load generator: no allocation
      // per read, and reads of up to 256 KB (Node's own reads allocate 64 KB each).
      const socket: Socket = connect({
        port: Number(port),
        host: hostname,
        onread: {
          buffer: Buffer.allocUnsafe(256 * 1024),
          callback: (n, buffer) => {
            received((buffer as Buffer).subarray(0, n));
            return true;
          },
        },
      });
      socket.on('connect', send);
      socket.on('error', reject);
    });

  const started = performance.now();
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    perSecond: latencies.length / seconds,
    p50Ms: median(latencies),
    p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? Number.NaN,
    bodyBytes,
  };
}

/** HTTP as a client sends it: node:http for any method and header, a bare socket for malformed requests. */
import { type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body as it came (a compressed body stays compressed). */
  bytes?: Buffer;
}

export function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes.toString(), bytes });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export const get = (base: string, path: string, headers: Record<string, string> = {}) =>
  send(base, 'GET', path, headers);

/** Writes `text` to a fresh connection and returns everything the server sends until it closes. */
export function sendRaw(port: number, text: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
  });
}

/** Status line, headers (lower-case names) and body of a raw HTTP/1.1 response. */
export function parseRaw(text: string): HttpResponse {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: IncomingHttpHeaders = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}

/**
 * One HTTP/1.1 exchange on a bare socket: the test writes the request bytes exactly as it wants them
 * (any method, duplicate or non-ASCII headers, malformed encodings, which node:http and fetch refuse or
 * normalise) and reads the response byte for byte, framing included, with a deadline: a server that
 * does not answer in time fails the test instead of hanging it.
 */
import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

export interface RawResponse {
  status: number;
  /** The reason phrase of the status line. */
  reason: string;
  /** Header fields in the order sent, names lower-cased. */
  fields: [string, string][];
  /** The header block as sent (status line excluded), for byte comparisons. */
  head: string;
  /** The body with the transfer coding and the content coding (gzip, br) removed. */
  body: Buffer;
  /** The body as it came, with only the transfer coding removed. */
  wireBody: Buffer;
}

export interface ExchangeOptions {
  /** The request was HEAD: no body follows the header, whatever Content-Length says. */
  head?: boolean;
  /** Milliseconds until the response must be complete. */
  timeoutMs?: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** The value of a header field, or undefined; several fields of one name are an error of the server. */
export function field(response: RawResponse, name: string): string | undefined {
  const values = response.fields.filter(([n]) => n === name).map(([, v]) => v);
  if (values.length > 1) throw new Error(`${values.length} ${name} fields in one response`);
  return values[0];
}

interface Head {
  status: number;
  reason: string;
  fields: [string, string][];
  head: string;
  bodyStart: number;
}

function parseHead(bytes: Buffer): Head | undefined {
  const end = bytes.indexOf(HEADER_END);
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3}) (.*)$/.exec(statusLine);
  if (!status) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
  const fields = lines.map((line): [string, string] => {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`malformed header line: ${JSON.stringify(line)}`);
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  });
  return {
    status: Number(status[1]),
    reason: status[2]!,
    fields,
    head: lines.join('\r\n'),
    bodyStart: end + 4,
  };
}

/** The decoded body of a complete chunked message, or undefined while more bytes are needed. */
function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('malformed chunk size');
    const dataEnd = lineEnd + 2 + size;
    if (bytes.length < dataEnd + 2) return undefined;
    if (size === 0) {
      // No trailers are sent by this server: the last chunk is followed by an empty line.
      return bytes.subarray(dataEnd, dataEnd + 2).toString() === '\r\n' ? Buffer.concat(parts) : undefined;
    }
    parts.push(bytes.subarray(lineEnd + 2, dataEnd));
    at = dataEnd + 2;
  }
}

/**
 * The body, once the bytes received hold all of it (undefined while more are needed): by
 * Content-Length, by chunks, or up to the close of the connection (`closed`).
 */
function completeBody(
  head: Head,
  rest: Buffer,
  options: ExchangeOptions,
  closed: boolean,
): Buffer | undefined {
  if (options.head || head.status === 204 || head.status === 304) return Buffer.alloc(0);
  const coding = head.fields.find(([n]) => n === 'transfer-encoding')?.[1];
  if (coding !== undefined) {
    if (coding.toLowerCase() !== 'chunked') throw new Error(`unexpected transfer coding ${coding}`);
    return dechunk(rest);
  }
  const length = head.fields.find(([n]) => n === 'content-length')?.[1];
  if (length !== undefined) {
    const expected = Number(length);
    if (rest.length > expected) throw new Error(`${rest.length - expected} bytes after the body`);
    return rest.length === expected ? rest : undefined;
  }
  return closed ? rest : undefined;
}

/** The representation inside a content coding. */
function decode(coding: string | undefined, body: Buffer): Buffer {
  if (coding === undefined || body.length === 0) return body;
  if (coding === 'gzip') return gunzipSync(body);
  if (coding === 'br') return brotliDecompressSync(body);
  throw new Error(`unexpected content coding ${coding}`);
}

/** Writes `request` to a fresh connection and resolves with the first final response to it. */
export function exchange(
  port: number,
  request: Buffer | string,
  options: ExchangeOptions = {},
): Promise<RawResponse> {
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    let settled = false;
    // Written, not ended: a half-closed connection is taken for a client that left.
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const finish = (error: Error | undefined, response?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(response!);
    };
    const timer = setTimeout(
      () => finish(new Error(`no complete response within ${timeoutMs} ms (${received.length} bytes)`)),
      timeoutMs,
    );
    const tryComplete = (closed: boolean) => {
      try {
        let head = parseHead(received);
        // Interim responses (100 Continue) precede the final one.
        while (head && head.status >= 100 && head.status < 200) {
          received = received.subarray(head.bodyStart);
          head = parseHead(received);
        }
        if (!head) {
          if (closed)
            finish(new Error(`connection closed after ${received.length} bytes, before a response`));
          return;
        }
        const body = completeBody(head, received.subarray(head.bodyStart), options, closed);
        if (body) {
          const coding = head.fields.find(([n]) => n === 'content-encoding')?.[1];
          const { status, reason, fields } = head;
          finish(undefined, {
            status,
            reason,
            fields,
            head: head.head,
            body: decode(coding, body),
            wireBody: body,
          });
        } else if (closed)
          finish(new Error(`connection closed in the middle of the body (${received.length} bytes)`));
      } catch (error) {
        finish(error as Error);
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryComplete(false);
    });
    socket.on('end', () => tryComplete(true));
    socket.on('close', () => tryComplete(true));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close (reset) after answering a request it refused before reading all of it.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') tryComplete(true);
      else finish(error);
    });
  });
}

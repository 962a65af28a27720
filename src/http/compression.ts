/**
 * Response compression: which coding a client asked for (Accept-Encoding, RFC 9110 §12.5.3) and the
 * streaming compressors. A small pipeline through node:zlib rather than @fastify/compress: the series
 * needs exact control of how a failure travels (a database error after the first byte must cut the
 * compressed response off, a client that leaves must stop the cursor), which a `pipeline` of two
 * streams gives directly; the plugin would add hooks to every route and a dependency for ~50 lines.
 *
 * Levels are chosen for streaming: the cheapest that still compresses well. Measured on a year of
 * 1-minute data (27.6 MB of JSON, CPU time of the compressor):
 *
 *   gzip 1: 2.93 MB,  75 ms      brotli 1: 1.87 MB,  51 ms
 *   gzip 4: 2.59 MB, 120 ms      brotli 3: 1.86 MB, 125 ms
 *   gzip 6: 2.62 MB, 266 ms      brotli 5: 1.50 MB, 343 ms
 *
 * Brotli 1 is both smaller and cheaper than any gzip level, so it is preferred when a client accepts
 * both equally. Bodies compressed once and then served many times (the discovery cache) can afford
 * far more: see CACHED_LEVELS.
 */
import { pipeline, type Readable, type Transform } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export type Coding = 'br' | 'gzip';

/** Codings we offer, in order of preference when a client's weights tie. */
const OFFERED: Coding[] = ['br', 'gzip'];

/** zlib's output chunk: 64 KiB makes few, large socket writes (its default is 16 KiB). */
const CHUNK_SIZE = 64 * 1024;

const STREAMING_LEVELS = { gzip: 1, br: 1 } as const;
/**
 * Bodies compressed once and sent many times (the discovery cache) are compressed on libuv's thread
 * pool, off the event loop, so they can afford brotli's slow levels. Measured on discovery for 1,000
 * wells × 3 tubes (230,894 B of JSON whose identifiers are random UUIDs):
 *
 *   gzip 6: 69,366 B,  7 ms      brotli 5: 69,881 B,  22 ms      brotli 10: 60,456 B, 120 ms
 *   gzip 9: 69,082 B, 10 ms      brotli 9: 69,928 B,  44 ms      brotli 11: 59,354 B, 333 ms
 *
 * Random identifiers leave little to find: only brotli's optimal parsing (10 and 11) gains, 13 %, and
 * 10 gets nearly all of it for a third of 11's time. The time is paid once per body and version.
 */
const CACHED_LEVELS = { gzip: 6, br: 10 } as const;
const gzip = promisify(zlib.gzip);
const brotliCompress = promisify(zlib.brotliCompress);

/**
 * Answers for the Accept-Encoding values seen, which are few (one or two per client library): parsing
 * one costs ~2 µs, a noticeable part of a cached discovery request. Only short values are kept, and
 * the map is emptied when it is full, so that odd values cannot grow it (at most ~32 KB).
 */
const negotiated = new Map<string, Coding | undefined>();
const NEGOTIATED_MAX = 256;
const NEGOTIATED_LENGTH_MAX = 128;

/**
 * The coding to use for an Accept-Encoding header, or undefined for none (identity). Weights (`q`) are
 * honoured, `q=0` refuses a coding, `*` stands for any coding not named, `x-gzip` is gzip.
 */
export function negotiateCoding(header: string | string[] | undefined): Coding | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string') return parseAcceptEncoding(header.join(','));
  if (header.length > NEGOTIATED_LENGTH_MAX) return parseAcceptEncoding(header);
  if (negotiated.has(header)) return negotiated.get(header);
  const coding = parseAcceptEncoding(header);
  if (negotiated.size >= NEGOTIATED_MAX) negotiated.clear();
  negotiated.set(header, coding);
  return coding;
}

function parseAcceptEncoding(header: string): Coding | undefined {
  const weights = new Map<string, number>();
  for (const element of header.split(',')) {
    const [name = '', ...parameters] = element.split(';').map((part) => part.trim().toLowerCase());
    if (name === '') continue;
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter));
    const weight = q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim());
    weights.set(name === 'x-gzip' ? 'gzip' : name, Number.isFinite(weight) ? weight : 0);
  }
  let best: Coding | undefined;
  let bestWeight = 0;
  for (const coding of OFFERED) {
    const weight = weights.get(coding) ?? weights.get('*') ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

function compressor(coding: Coding, level: number): Transform {
  return coding === 'gzip'
    ? zlib.createGzip({ level, chunkSize: CHUNK_SIZE })
    : zlib.createBrotliCompress({
        chunkSize: CHUNK_SIZE,
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level },
      });
}

/**
 * `source` compressed as it streams. An error of the source destroys the result with that error (so
 * the response is cut off), and destroying the result (a client that left) destroys the source.
 */
export function compressStream(source: Readable, coding: Coding): Transform {
  const compressed = compressor(coding, STREAMING_LEVELS[coding]);
  // The outcome reaches the response through `compressed` itself; nothing more to do here.
  pipeline(source, compressed, () => {});
  return compressed;
}

/** A whole body compressed on the thread pool, for bodies that are cached and sent many times. */
export function compressBody(body: Buffer, coding: Coding): Promise<Buffer> {
  return coding === 'gzip'
    ? gzip(body, { level: CACHED_LEVELS.gzip })
    : brotliCompress(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: CACHED_LEVELS.br,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      });
}

/**
 * Response compression: which coding a client asked for (Accept-Encoding, RFC 9110 §12.5.3) and the
 * compressors. Ours rather than @fastify/compress, which compresses a body on every response: the
 * discovery body is compressed once per registry version and then sent from the cache, a cost the
 * plugin would pay on every request. A HEAD must also name the coding a GET would use, so the
 * negotiation is ours in any case. (docs/decisions/0009-home-made-parts.md: the
 * runs, and why the series stays here too.)
 *
 * Streaming levels are the cheapest that still compress the series well; brotli 1 is both smaller and
 * cheaper than any gzip level, so it is preferred when a client accepts both equally. Cached bodies:
 * CACHED_LEVELS.
 */
import { pipeline, type Readable, type Transform } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { weightedElements } from './weightedElements.js';

export type Coding = 'br' | 'gzip';

/** Codings we offer, in order of preference when a client's weights tie. */
const OFFERED: Coding[] = ['br', 'gzip'];

/** zlib's output chunk: 64 KiB makes few, large socket writes (its default is 16 KiB). */
const CHUNK_SIZE = 64 * 1024;

const STREAMING_LEVELS = { gzip: 1, br: 1 } as const;
/**
 * Bodies compressed once and sent many times (the discovery cache) are compressed on libuv's thread
 * pool, off the event loop, so they can afford brotli's slow levels. Discovery's random identifiers
 * leave little to find: only brotli's optimal parsing (10 and 11) gains much, and 10 gets nearly all of
 * 11's gain in far less time, paid once per body and version (docs/decisions/0009-home-made-parts.md).
 */
const CACHED_LEVELS = { gzip: 6, br: 10 } as const;
const gzip = promisify(zlib.gzip);
const brotliCompress = promisify(zlib.brotliCompress);

/**
 * Answers for the Accept-Encoding values seen, which are few (one or two per client library): parsing
 * one is a noticeable part of a cached discovery request (docs/decisions/0013-per-request-costs.md). Only
 * short values are kept, and the map is emptied when it is full, so that odd values cannot grow it.
 */
const negotiated = new Map<string, Coding | undefined>();
const NEGOTIATED_MAX = 256;
const NEGOTIATED_LENGTH_MAX = 128;

/**
 * The coding to use for an Accept-Encoding header, or undefined for none (identity). Weights (`q`) are
 * honoured, `q=0` refuses a coding, `*` stands for any coding not named, `x-gzip` is gzip. A response
 * whose coding this decides carries `Vary: Accept-Encoding`, so that caches keep the codings apart.
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
  for (const { value: name, q } of weightedElements(header)) {
    if (name === '') continue;
    weights.set(name === 'x-gzip' ? 'gzip' : name, q);
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

/**
 * A whole body compressed on the thread pool: at the cached levels for bodies that are cached and sent
 * many times, at the streaming levels for one made for a single response.
 */
export function compressBody(
  body: Buffer,
  coding: Coding,
  sent: 'many times' | 'once' = 'many times',
): Promise<Buffer> {
  const levels = sent === 'once' ? STREAMING_LEVELS : CACHED_LEVELS;
  return coding === 'gzip'
    ? gzip(body, { level: levels.gzip })
    : brotliCompress(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: levels.br,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      });
}

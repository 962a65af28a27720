/**
 * The UI's files are large and fetched rarely, so they are compressed as they stream, at the streaming
 * level, when the client accepts a coding. No ranges are offered on a compressed body. Its ETag is the
 * file's, which @fastify/static makes weak: a compressed body is not the file byte for byte.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { compressStream, negotiateCoding } from '../../http/compression.js';

export async function compressDocs(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode !== 200 || payload === null || payload === undefined) return payload;
  reply.header('Vary', 'Accept-Encoding');
  const coding = negotiateCoding(request.headers['accept-encoding']);
  if (coding === undefined) return payload;
  reply.removeHeader('content-length').removeHeader('accept-ranges').header('Content-Encoding', coding);
  const source = payload instanceof Readable ? payload : Readable.from([Buffer.from(payload as string)]);
  return compressStream(source, coding);
}

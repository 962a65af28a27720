import type { FastifyReply, FastifyRequest } from 'fastify';
import { methodNotAllowed } from './problems.js';

/**
 * First hook of every route (each is registered for every method the server knows): anything but
 * GET and HEAD on a known path is 405 with `Allow`, before the key is looked at or a body is read.
 */
export async function onlyGetAndHead(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(request.method);
}

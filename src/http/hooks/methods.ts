import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodNotAllowed } from '../problems/problems.js';

/**
 * Every method Node's HTTP parser knows reaches the router, so each is a 405 on a known path rather
 * than a 404 (CONNECT never reaches it; problems.ts answers it).
 */
export function acceptEveryMethod(app: FastifyInstance): void {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
}

/**
 * First hook of every route (each is registered for every method the server knows): anything but
 * GET and HEAD on a known path is 405 with `Allow`, before the key is looked at or a body is read.
 */
export function onlyGetAndHead(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  done(request.method === 'GET' || request.method === 'HEAD' ? undefined : methodNotAllowed(request.method));
}

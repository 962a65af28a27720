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
 * The methods a route of this API declares. HEAD is answered by the route itself: Fastify's own HEAD
 * route runs the GET handler and drops the body, so a series' HEAD would read and drain the stream.
 */
export const READ_METHODS = ['GET', 'HEAD'];

/**
 * The routes registered in `app`'s context (a plugin's) are read-only: each is registered for every
 * method the server knows, and anything but GET and HEAD is 405 with `Allow`, before the key is looked
 * at or a body is read.
 */
export function readOnlyRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.method = app.supportedMethods;
  });
  app.addHook('onRequest', onlyGetAndHead);
}

function onlyGetAndHead(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  done(request.method === 'GET' || request.method === 'HEAD' ? undefined : methodNotAllowed(request.method));
}

/**
 * No endpoint reads a request body (the API is read-only: GET and HEAD). A request that announces one is
 * still answered, but its connection is closed after the answer instead of kept for the next request:
 * Node would otherwise read and discard the rest of the body first, and a client sending that body a
 * byte at a time (or announcing gigabytes) would hold the connection for as long as it liked.
 */
import type { FastifyInstance } from 'fastify';

export function closeConnectionsWithBodies(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const length = request.headers['content-length'];
    if (request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
      reply.header('Connection', 'close');
    }
    done();
  });
}

/**
 * Headers every response carries: `API-Version` (the contract's MAJOR.MINOR.PATCH) and `X-Request-Id`,
 * the id under which this request is logged, so a client can quote it to the operator.
 */
import type { FastifyInstance } from 'fastify';
import { API_VERSION } from '../../contract.js';

export function registerVersionHeader(app: FastifyInstance): void {
  // onRequest, the first hook: every later outcome (error, 404, 405, 429, 304, stream) keeps it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('API-Version', API_VERSION);
    reply.header('X-Request-Id', request.id);
    done();
  });
}

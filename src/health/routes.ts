/**
 * GET /health/live and /health/ready: for the orchestrator and the load balancer, outside /v1, with no
 * key and no limits. Liveness does no I/O (the process answers: it is alive); readiness says whether
 * to send this replica requests (readiness.ts). Neither writes a request log line per check (a check
 * every two seconds from each load balancer would bury the requests).
 */
import type { FastifyInstance } from 'fastify';
import { READ_METHODS, readOnlyRoutes } from '../http/hooks/methods.js';
import type { Readiness } from './readiness.js';

export const HEALTH_LIVE_PATH = '/health/live';
export const HEALTH_READY_PATH = '/health/ready';

const LIVE = Buffer.from(JSON.stringify({ status: 'pass' }));

export async function healthRoutes(app: FastifyInstance, options: { readiness: Readiness }): Promise<void> {
  readOnlyRoutes(app);
  app.route({
    method: READ_METHODS,
    url: HEALTH_LIVE_PATH,
    logLevel: 'warn',
    handler: async (_request, reply) =>
      reply.header('Cache-Control', 'no-store').type('application/json').send(LIVE),
  });
  app.route({
    method: READ_METHODS,
    url: HEALTH_READY_PATH,
    logLevel: 'warn',
    handler: async (_request, reply) => {
      const report = await options.readiness.check();
      return reply
        .code(report.status === 'fail' ? 503 : 200)
        .header('Cache-Control', 'no-store')
        .type('application/json')
        .send(Buffer.from(JSON.stringify(report)));
    },
  });
}

/**
 * GET /health/live and /health/ready: for the orchestrator and the load balancer, outside /v1, with no
 * key and no limits. Liveness does no I/O (the process answers: it is alive); readiness says whether
 * to send this replica requests (src/health/readiness.ts). Neither writes a request log line per check
 * (a check every two seconds from each load balancer would bury the requests).
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { HEALTH_LIVE_PATH, HEALTH_READY_PATH } from '../http/paths.js';
import type { Readiness } from './readiness.js';

const LIVE = Buffer.from(JSON.stringify({ status: 'pass' }));

export function healthRoutes(
  app: FastifyInstance,
  options: { readiness: Readiness; methods: string[]; onRequest: onRequestHookHandler[] },
): void {
  const common = {
    method: options.methods,
    exposeHeadRoute: false,
    onRequest: options.onRequest,
    logLevel: 'warn',
  } as const;
  app.route({
    ...common,
    url: HEALTH_LIVE_PATH,
    handler: async (_request, reply) =>
      reply.header('Cache-Control', 'no-store').type('application/json').send(LIVE),
  });
  app.route({
    ...common,
    url: HEALTH_READY_PATH,
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

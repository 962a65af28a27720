/**
 * GET /metrics on a listener of its own (METRICS_PORT), never on the API's port.
 *
 * A separate port rather than a bearer token: the API's port is public behind the load balancer, which
 * would also hand a scrape to whichever replica it picks, while Prometheus must reach each replica
 * itself. On an internal port nothing public can reach it, and there is no token to hand out, rotate
 * or leak. The metrics name no key, key id or tube (src/http/observability/metrics.ts), but request rates and pool
 * use are still nobody else's business.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { collectDefaultMetrics } from 'prom-client';
import type { Settings } from '../../config.js';
import { acceptEveryMethod, READ_METHODS, readOnlyRoutes } from '../hooks/methods.js';
import { registerVersionHeader } from '../hooks/version.js';
import { clientErrorHandler, frameworkErrors, registerProblems } from '../problems/problems.js';
import type { ServiceMetrics } from './metrics.js';

export const METRICS_PATH = '/metrics';

export function buildMetricsApp(metrics: ServiceMetrics, logger: FastifyBaseLogger): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors,
    clientErrorHandler,
    return503OnClosing: false,
    exposeHeadRoutes: false,
  });
  acceptEveryMethod(app);
  registerVersionHeader(app);
  registerProblems(app);
  readOnlyRoutes(app);
  app.route({
    method: READ_METHODS,
    url: METRICS_PATH,
    handler: async (_request, reply) =>
      reply
        .header('Cache-Control', 'no-store')
        .type(metrics.registry.contentType)
        .send(await metrics.registry.metrics()),
  });
  return app;
}

/** Serves `metrics` on METRICS_PORT (with the process's own: memory, CPU, event loop); undefined when unset. */
export async function listenForMetrics(
  metrics: ServiceMetrics,
  settings: Pick<Settings, 'HOST' | 'METRICS_PORT'>,
  logger: FastifyBaseLogger,
): Promise<FastifyInstance | undefined> {
  if (settings.METRICS_PORT === undefined) return undefined;
  collectDefaultMetrics({ register: metrics.registry });
  const app = buildMetricsApp(metrics, logger);
  const address = await app.listen({ host: settings.HOST, port: settings.METRICS_PORT });
  logger.info({ metrics: `${address}${METRICS_PATH}` }, 'metrics listening');
  return app;
}

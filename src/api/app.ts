/**
 * buildApp(deps) → a Fastify instance with every route and plugin, not yet listening. Tests and
 * benchmarks build it with their own pool; `gwapi serve` adds listen() and signal handling.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Settings } from '../config.js';
import type { Sql } from '../db/connect.js';

export const API_VERSION = '1.0.0';

export interface AppDependencies {
  sql: Sql;
  settings: Settings;
  /** Fastify/pino logger options; tests pass a stream to capture log lines. */
  logger?: FastifyServerOptions['logger'];
}

export function buildApp(deps: AppDependencies): FastifyInstance {
  const app = Fastify({
    logger: deps.logger ?? { level: deps.settings.LOG_LEVEL, redact: ['req.headers["x-api-key"]'] },
  });
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('API-Version', API_VERSION);
  });
  app.setNotFoundHandler((request, reply) => {
    const instance = request.url.split('?')[0];
    reply
      .code(404)
      .type('application/problem+json')
      .send({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'No such resource.', instance });
  });
  return app;
}

/**
 * buildApp(deps) → a Fastify instance with every route and plugin, not yet listening. Tests and
 * benchmarks build it with their own pool; `gwapi serve` adds listen() and signal handling. The order
 * of a data request's checks is v1/plugin.ts's.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Settings } from './config.js';
import { V1_PREFIX } from './contract.js';
import type { Sql } from './db/connect.js';
import { openReads, type Reads } from './db/readReplicas/reads.js';
import { Readiness } from './health/readiness.js';
import { healthRoutes } from './health/routes.js';
import { BulkTurns } from './http/bulkTurns.js';
import { acceptEveryMethod } from './http/hooks/methods.js';
import { closeConnectionsWithBodies } from './http/hooks/requestBodies.js';
import { registerVersionHeader } from './http/hooks/version.js';
import { createLogger, registerRequestLog } from './http/observability/logging.js';
import { createMetrics, type ServiceMetrics } from './http/observability/metrics.js';
import { registerRequestMetrics } from './http/observability/requestMetrics.js';
import { clientErrorHandler, frameworkErrors, registerProblems } from './http/problems/problems.js';
import { trustProxyOption } from './http/trustProxy.js';
import { createClientResolver } from './keys/clients.js';
import { type ClientLimits, unlimited } from './limits/types.js';
import { v1Api } from './v1/plugin.js';

export interface AppDependencies {
  /** DATABASE_URL's pool: API keys are looked up there, and everything is read there without `reads`. */
  sql: Sql;
  /**
   * Where wells, tubes and series are read, started (server.ts: with DATABASE_READ_URL's replicas);
   * `sql` alone when not given.
   */
  reads?: Reads;
  settings: Settings;
  /** Client limits (429); lifted when not given. */
  limits?: ClientLimits;
  /** The service's logger (server.ts shares it with the limits); made from LOG_LEVEL when not given. */
  logger?: FastifyBaseLogger;
  /** Where log lines go when no logger is given (standard output when not given); tests read them. */
  logStream?: DestinationStream;
  /** Where the app counts what it does; its own registry when not given (server.ts serves it). */
  metrics?: ServiceMetrics;
  /** How long a client may take to send its request (REQUEST_TIMEOUT_MS when not given; tests shorten it). */
  requestTimeoutMs?: number;
}

/** How long a client may take to send a request (Fastify's default: no limit; Node's for the head: 60 s). */
export const REQUEST_TIMEOUT_MS = 30_000;

export function buildApp(deps: AppDependencies): FastifyInstance {
  const { sql, settings } = deps;
  const limits = deps.limits ?? unlimited;
  const app = Fastify({
    loggerInstance: deps.logger ?? createLogger(settings.LOG_LEVEL, deps.logStream),
    // The client address (what failed-auth limiting counts) comes from X-Forwarded-For only when the
    // operator says which proxies to believe; otherwise anyone could pick a fresh address per guess.
    trustProxy: trustProxyOption(settings.TRUST_PROXY),
    // One line per request is written by registerRequestLog, with the fields Fastify's lines lack.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    frameworkErrors,
    clientErrorHandler,
    http: {
      // A request without Host reaches the app, which refuses it as a problem (problems.ts), not Node.
      requireHostHeader: false,
      // How often Node looks for requests past their timeout (its default, 30 s, would double it).
      connectionsCheckingInterval: 1000,
    },
    // A request must arrive within this, or it is a 408 problem (problems.ts) and the connection is closed:
    // a client trickling its head holds a connection no longer (a body is never waited for, requestBodies.ts).
    // Responses are not affected: a year-long stream may take as long as it takes.
    requestTimeout: deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    // Fastify's 503 while closing is not a problem document; in-flight and late requests are served.
    return503OnClosing: false,
    // Routes declare HEAD themselves (READ_METHODS, hooks/methods.ts).
    exposeHeadRoutes: false,
    routerOptions: {
      // Longer path parameters are refused before routing; a tube identifier is 36 characters, and a
      // longer one should reach the route and be the ordinary 404, so the bound is generous.
      maxParamLength: 1000,
    },
  });

  acceptEveryMethod(app);

  const metrics = deps.metrics ?? createMetrics({ limits, poolMax: settings.DATABASE_POOL_MAX });
  // Every use of a pool by a request passes its gate (src/db/connectionGate.ts).
  const reads = deps.reads ?? openReads({ settings, primary: sql, metrics });
  const readiness = new Readiness({ reads, keysSql: sql, limits, logger: app.log });
  // The first thing a close does: not ready from now on (lifecycle/shutdown.ts).
  app.addHook('preClose', async () => readiness.shutDown());

  // Hooks of every response, on every path: known, unknown, inside /v1 or not.
  registerVersionHeader(app);
  registerRequestLog(app);
  registerRequestMetrics(app, metrics);
  const turns = new BulkTurns();
  turns.countRequests(app);
  registerProblems(app);
  closeConnectionsWithBodies(app);
  // Set by the key check inside /v1, read by the request log of every request.
  app.decorateRequest('client', null);

  const resolver = createClientResolver(sql, {
    cacheSeconds: settings.KEY_CACHE_SECONDS,
    onLookup: metrics.keyLookup,
    withConnection: (work, signal) => reads.primary.gate.run(work, signal, 'key'),
    // With replicas, through the read router: a usable replica, retried elsewhere if its connection goes.
    ...(reads.replicas().length > 0 && {
      whilePrimaryUnavailable: (lookup) =>
        reads.read((source) => source.gate.run(() => lookup(source.sql), undefined, 'key')),
    }),
  });

  app.register(v1Api, { prefix: V1_PREFIX, reads, resolver, limits, settings, metrics, turns });
  app.register(healthRoutes, { readiness });
  return app;
}

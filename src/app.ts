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
import type { ReplicaMonitor } from './db/readReplicas/monitor.js';
import type { ReplicaPool } from './db/readReplicas/readReplicas.js';
import { primaryReads, replicaReads } from './db/readReplicas/readSources.js';
import { Readiness } from './health/readiness.js';
import { healthRoutes } from './health/routes.js';
import { connectionGates } from './http/connectionGates.js';
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
  /** Where wells, tubes, series and readiness are read when there are no `replicas`. */
  sql: Sql;
  /**
   * Read replicas (DATABASE_READ_URL) and their monitor: reads go to the usable ones, and to `keysSql`
   * (the primary) as READ_FALLBACK says.
   */
  replicas?: {
    pools: readonly ReplicaPool[];
    monitor: Pick<ReplicaMonitor, 'status'>;
    loadBalance: 'random' | 'disable';
  };
  /**
   * Where API keys are looked up: the primary when `sql` is a read replica (commands/database.ts says
   * why); `sql` when not given.
   */
  keysSql?: Sql;
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
  const keysSql = deps.keysSql ?? sql;
  const replicas = deps.replicas;
  // Every use of a pool by a request passes its gate (src/db/connectionGate.ts).
  const gates = connectionGates(settings, metrics, keysSql === sql, replicas?.pools.length);
  const reads = replicas
    ? replicaReads({
        replicas: replicas.pools.map((pool, i) => ({ ...pool, gate: gates.replicaGates[i]! })),
        primary: { sql: keysSql, gate: gates.keysGate },
        monitor: replicas.monitor,
        fallback: settings.READ_FALLBACK,
        loadBalance: replicas.loadBalance,
        onRead: metrics.readServed,
        onUnavailable: metrics.readsUnavailable,
      })
    : primaryReads(sql, gates.gate, metrics.readServed);
  metrics.watchReplicas(reads);
  const readiness = new Readiness({ reads, keysSql, limits, logger: app.log });
  // The first thing a close does: not ready from now on (lifecycle/shutdown.ts).
  app.addHook('preClose', async () => readiness.shutDown());

  // Hooks of every response, on every path: known, unknown, inside /v1 or not.
  registerVersionHeader(app);
  registerRequestLog(app);
  registerRequestMetrics(app, metrics);
  registerProblems(app);
  closeConnectionsWithBodies(app);
  // Set by the key check inside /v1, read by the request log of every request.
  app.decorateRequest('client', null);

  const resolver = createClientResolver(keysSql, {
    cacheSeconds: settings.KEY_CACHE_SECONDS,
    onLookup: metrics.keyLookup,
    withConnection: gates.keysGate.run,
    // With replicas, through the read router: a usable replica, retried elsewhere if its connection goes.
    ...(replicas && {
      whilePrimaryUnavailable: (lookup) => reads.read((source) => source.gate.run(() => lookup(source.sql))),
    }),
  });

  app.register(v1Api, { prefix: V1_PREFIX, reads, resolver, limits, settings, metrics });
  app.register(healthRoutes, { readiness });
  return app;
}

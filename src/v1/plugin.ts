/**
 * Version 1 of the API, registered under V1_PREFIX: one encapsulated plugin that owns the hooks its
 * routes share. A request to a data endpoint passes, in the order the contract fixes: route (404, 405)
 * → key (401) → client limits (429) → parameters (400) → access (403/404) → response. The router and
 * v1Routes give the first, onRequest hooks of the data endpoints the next two in that order, the
 * route's query schema the 400 and its handler the rest. The document and the
 * interactive reference (docs/) are public.
 */
import type { FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { Settings } from '../config.js';
import type { ReadSources } from '../db/readReplicas/readSources.js';
import type { BulkTurns } from '../http/bulkTurns.js';
import { admitClient } from '../http/hooks/admitClient.js';
import { authenticate } from '../http/hooks/authenticate.js';
import { readOnlyRoutes } from '../http/hooks/methods.js';
import type { ServiceMetrics } from '../http/observability/metrics.js';
import type { ClientResolver } from '../keys/clients.js';
import { type ClientLimits, unlimited } from '../limits/types.js';
import { syncTokens } from '../sync/tokens.js';
import { docsRoute } from './docs/plugin.js';
import { latestRoute } from './latest/route.js';
import { networkRoute } from './network/route.js';
import { ogcDataRoutes, ogcPublicRoutes } from './ogc/route.js';
import { openApiRoute } from './openapi/route.js';
import { seriesRoute } from './series/route.js';
import { wellsRoute } from './wells/route.js';

export interface V1Dependencies {
  /** Where wells, tubes and series are read: each source a pool with its gate (src/db/readReplicas/). */
  reads: ReadSources;
  /** API key → client. */
  resolver: ClientResolver;
  limits: ClientLimits;
  settings: Settings;
  metrics: ServiceMetrics;
  turns: BulkTurns;
}

/**
 * What every route of `api` (a plugin's context) shares: it is read-only (405 for other methods), and
 * its schema's querystring is a zod schema, validated after the onRequest hooks and before the
 * handler; what it refuses is a 400 problem naming each parameter (problems.ts).
 */
export function v1Routes(api: FastifyInstance): void {
  readOnlyRoutes(api);
  api.setValidatorCompiler(validatorCompiler);
}

export async function v1Api(api: FastifyInstance, deps: V1Dependencies): Promise<void> {
  const { reads, resolver, limits, settings, metrics, turns } = deps;
  const sync = syncTokens(reads);
  v1Routes(api);
  await api.register(openApiRoute, { settings });
  await api.register(docsRoute, { settings });
  await api.register(ogcPublicRoutes);
  /** The key (401) and the client limits (429) of a scope's routes; `queryKey`: `api_key` too. */
  const keyed = (scope: FastifyInstance, queryKey: boolean) => {
    scope.addHook('onRequest', authenticate(resolver, limits, { queryKey }));
    // Lifted limits admit every request and advertise nothing, so they need no hook at all.
    if (limits !== unlimited) scope.addHook('onRequest', admitClient(limits, settings));
  };
  await api.register(async function ogcEndpoints(ogc) {
    keyed(ogc, true);
    await ogc.register(ogcDataRoutes, { reads, metrics, turns });
  });
  await api.register(async function dataEndpoints(data) {
    keyed(data, false);
    await data.register(wellsRoute, { reads });
    await data.register(seriesRoute, { reads, metrics, turns });
    await data.register(networkRoute, { reads, metrics, turns, sync });
    await data.register(latestRoute, { reads, metrics, turns });
  });
}

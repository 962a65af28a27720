/** The paths of API version 1: routes, the OpenAPI document and the 404/405 decision all use these. */

export const WELLS_PATH = '/v1/groundwater-monitoring-wells';
export const MEASUREMENTS_PATH = '/v1/groundwater-monitoring-tubes/:tubeIdentifier/measurements';
export const OPENAPI_PATH = '/v1/openapi.json';

export const API_PATHS = [WELLS_PATH, MEASUREMENTS_PATH, OPENAPI_PATH] as const;

/** Operations, outside /v1 and the contract: the orchestrator's and the load balancer's checks. */
export const HEALTH_LIVE_PATH = '/health/live';
export const HEALTH_READY_PATH = '/health/ready';
/** Served on its own listener (METRICS_PORT), never on the API's port. */
export const METRICS_PATH = '/metrics';

/** The methods every path supports (decisions.md); anything else on a known path is 405. */
export const ALLOWED_METHODS = 'GET, HEAD';

/** `:name` segments match one non-empty segment, as the router matches them. */
const KNOWN_PATH = new RegExp(
  `^(?:${[...API_PATHS, HEALTH_LIVE_PATH, HEALTH_READY_PATH].map((path) => path.replace(/[.]/g, '\\.').replace(/:\w+/g, '[^/]+')).join('|')})$`,
);

/**
 * Whether a raw request path (no query) names one of the API's resources. Only for requests the router
 * never sees: methods the HTTP parser or Fastify do not know.
 */
export function isApiPath(path: string): boolean {
  return KNOWN_PATH.test(path);
}

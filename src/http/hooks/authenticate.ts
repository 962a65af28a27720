/** X-API-Key → `request.client`, or 401 (or 429 when an address keeps presenting bad keys). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Client, ClientResolver } from '../../keys/clients.js';
import type { ClientLimits } from '../../limits/types.js';
import { ProblemError } from '../problems/problems.js';
import { tooManyRequests } from './admitClient.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated client; set by `authenticate` on protected routes. */
    client: Client | null;
  }
}

export const API_KEY_HEADER = 'x-api-key';

/** RFC 9110 wants a challenge on every 401; this one names the header the key belongs in. */
const CHALLENGE = { 'WWW-Authenticate': 'ApiKey header="X-API-Key"' };

/** The query parameter that carries the key where a client can only add to a URL (OGC API clients). */
export const API_KEY_PARAMETER = 'api_key';

/**
 * The 401 of a request without a key (`presented` false) or with one that is not valid; `queryKey`
 * where the endpoint also takes the key as `api_key`.
 */
export const unauthorized = (presented: boolean, queryKey = false) =>
  new ProblemError(
    401,
    presented
      ? 'The API key is not valid: it is unknown, revoked or mistyped. Ask the operator for a key.'
      : queryKey
        ? `This endpoint needs an API key in the X-API-Key header, or as ${API_KEY_PARAMETER} in the URL for a client that cannot send one.`
        : 'This endpoint needs an API key in the X-API-Key header.',
    CHALLENGE,
  );

/** The 400 of a key given in both places that differ; it names neither. */
export const keysDisagree = () =>
  new ProblemError(
    400,
    `The API key in the X-API-Key header and the one in ${API_KEY_PARAMETER} differ: give one key, once.`,
  );

/**
 * The key a request presents: the header, or with `queryKey` also `api_key` (which must then be the same
 * key, given once). Undefined when none; a ProblemError for keys that disagree.
 */
export function presentedKey(request: FastifyRequest, queryKey: boolean): string | undefined {
  const header = request.headers[API_KEY_HEADER];
  const fromHeader = typeof header === 'string' && header !== '' ? header : undefined;
  if (!queryKey) return fromHeader;
  const parameter = (request.query as Record<string, unknown> | undefined)?.[API_KEY_PARAMETER];
  if (parameter === undefined) return fromHeader;
  if (typeof parameter !== 'string' || (fromHeader !== undefined && parameter !== fromHeader))
    throw keysDisagree();
  return parameter === '' ? fromHeader : parameter;
}

/**
 * The hook that resolves the presented key to `request.client`. With `queryKey`, `api_key` presents a
 * key as the header does.
 */
export function authenticate(resolver: ClientResolver, limits: ClientLimits, { queryKey = false } = {}) {
  async function refuse(request: FastifyRequest, presented: unknown): Promise<never> {
    // Guessing keys costs the guesser, not the database: failures are limited per address.
    const admission = await limits.admitFailedAuth(request.ip);
    if (!admission.admitted) throw tooManyRequests('failed-auth', admission.retryAfterSeconds);
    throw unauthorized(Boolean(presented), queryKey);
  }

  // Callback style, so that a key the resolver answers at once is checked in this turn.
  return function authenticateHook(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    let presented: string | undefined;
    try {
      presented = presentedKey(request, queryKey);
    } catch (error) {
      done(error as Error);
      return;
    }
    const found = (client: Client | undefined) => {
      if (!client) {
        refuse(request, presented).catch(done);
        return;
      }
      request.client = client;
      done();
    };
    const client = presented === undefined ? undefined : resolver.resolve(presented);
    if (client instanceof Promise) client.then(found, done);
    else found(client);
  };
}

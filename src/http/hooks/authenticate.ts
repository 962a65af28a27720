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

/** The 401 of a request without a key (`presented` false) or with one that is not valid. */
export const unauthorized = (presented: boolean) =>
  new ProblemError(
    401,
    presented
      ? 'The API key is not valid: it is unknown, revoked or mistyped. Ask the operator for a key.'
      : 'This endpoint needs an API key in the X-API-Key header.',
    CHALLENGE,
  );

export function authenticate(resolver: ClientResolver, limits: ClientLimits) {
  async function refuse(request: FastifyRequest, presented: unknown): Promise<never> {
    // Guessing keys costs the guesser, not the database: failures are limited per address.
    const admission = await limits.admitFailedAuth(request.ip);
    if (!admission.admitted) throw tooManyRequests('failed-auth', admission.retryAfterSeconds);
    throw unauthorized(Boolean(presented));
  }

  // Callback style, so that a key the resolver answers at once is checked in this turn.
  return function authenticateHook(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    const presented = request.headers[API_KEY_HEADER];
    const found = (client: Client | undefined) => {
      if (!client) {
        refuse(request, presented).catch(done);
        return;
      }
      request.client = client;
      done();
    };
    const client =
      typeof presented === 'string' && presented !== '' ? resolver.resolve(presented) : undefined;
    if (client instanceof Promise) client.then(found, done);
    else found(client);
  };
}

/**
 * The request path's side of client limits (src/limits/types.ts): one admission per authenticated
 * request, after the key and before the parameters (decisions.md), and its concurrency slot released
 * when the response is over, streamed body included, or the client went away.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config.js';
import type { Admission, ClientLimits } from '../../limits/types.js';
import { ProblemError } from './problems.js';

type Refusal = Extract<Admission, { admitted: false }>;

const REFUSALS: Record<Refusal['reason'], string> = {
  rate: 'This API key has used up its requests for now (a burst, then a steady rate per minute).',
  concurrency: 'This API key already has as many requests in progress as it may have at once.',
  'failed-auth': 'Too many requests without a valid API key came from this address.',
};

/** A 429 that remembers why (metrics count refusals by reason). */
export class LimitRefusal extends ProblemError {
  constructor(
    readonly reason: Refusal['reason'],
    detail: string,
    headers: Record<string, string>,
  ) {
    super(429, detail, headers);
  }
}

export function tooManyRequests(reason: Refusal['reason'], retryAfterSeconds: number): LimitRefusal {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new LimitRefusal(reason, `${REFUSALS[reason]} Retry after ${seconds} s.`, {
    'Retry-After': String(seconds),
  });
}

export function admitClient(limits: ClientLimits, settings: Settings) {
  // IETF draft "RateLimit header fields for HTTP": quota and the window in which it refills.
  const window = Math.round(settings.RATE_LIMIT_BURST / settings.RATE_LIMIT_PER_SECOND);
  const policy = `"default";q=${settings.RATE_LIMIT_BURST};w=${window}`;

  return async function admitHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const admission = await limits.admit(request.client!.keyId);
    if (!admission.admitted) throw tooManyRequests(admission.reason, admission.retryAfterSeconds);
    // 'close' fires once the response is complete or the connection is gone, whichever comes first.
    reply.raw.once('close', admission.release);
    const { limit, remaining, resetSeconds } = admission.rate;
    if (limit > 0) {
      reply.header('RateLimit-Policy', policy);
      reply.header('RateLimit', `"default";r=${remaining};t=${Math.ceil(resetSeconds)}`);
    }
  };
}

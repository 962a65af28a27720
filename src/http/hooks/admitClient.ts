/**
 * The request path's side of client limits (src/limits/types.ts): one admission per authenticated
 * request (its place among the checks: src/v1/plugin.ts), and its concurrency slot released when the
 * response is over, streamed body included, or the client went away.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config.js';
import type { Admission, ClientLimits } from '../../limits/types.js';
import { ProblemError } from '../problems/problems.js';
import { whenResponseClosed } from '../responseClosed.js';

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

/**
 * RateLimit header fields for HTTP (draft-ietf-httpapi-ratelimit-headers, the syntax of draft 09 and
 * later): one policy, "default", the token bucket. RateLimit-Policy: its size (`q`) and the seconds an
 * empty bucket takes to fill (`w`); RateLimit: the tokens left (`r`) and the seconds until the next
 * token comes back (`t`), the draft's effective window: within it, `r` is all the key may use.
 */
export function rateLimitPolicy(settings: Pick<Settings, 'RATE_LIMIT_BURST' | 'RATE_LIMIT_PER_SECOND'>) {
  const window = Math.round(settings.RATE_LIMIT_BURST / settings.RATE_LIMIT_PER_SECOND);
  return `"default";q=${settings.RATE_LIMIT_BURST};w=${window}`;
}

export function rateLimit(remaining: number, resetSeconds: number): string {
  return `"default";r=${remaining};t=${Math.ceil(resetSeconds)}`;
}

export function admitClient(limits: ClientLimits, settings: Settings) {
  const policy = rateLimitPolicy(settings);

  return async function admitHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const admission = await limits.admit(request.client!.keyId);
    if (!admission.admitted) throw tooManyRequests(admission.reason, admission.retryAfterSeconds);
    // Over when the response is complete or the client is gone, even gone while this was awaited.
    whenResponseClosed(reply.raw, admission.release);
    const { limit, remaining, resetSeconds } = admission.rate;
    // Lifted limits (LIMITS_ENABLED=false) advertise nothing.
    if (limit > 0) {
      reply.header('RateLimit-Policy', policy);
      reply.header('RateLimit', rateLimit(remaining, resetSeconds));
    }
  };
}

/**
 * The components every endpoint shares: the response headers, the problem responses of more than one
 * endpoint, and the references the endpoints' parts of the document (their openapi.ts) use to name them.
 */
import { z } from 'zod';
import type { ZodOpenApiResponseObject } from 'zod-openapi';
import type { Settings } from '../../config.js';
import { jsonSchemaOf } from '../../http/jsonSchema.js';
import { PROBLEM_MEDIA_TYPE, Problem } from '../../http/problems/schema.js';
import { rateLimit, rateLimitPolicy } from '../../limits/admitClient.js';
import { API_VERSION } from '../contract.js';

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

const stringHeader = (description: string, example: string) => ({
  description,
  schema: jsonSchemaOf(z.string().meta({ examples: [example] })),
});

export function headers(settings: Settings) {
  return {
    'API-Version': {
      description:
        'Version of the contract that produced this response: MAJOR.MINOR.PATCH. On every response.',
      required: true,
      schema: jsonSchemaOf(z.literal(API_VERSION)),
    },
    'X-Request-Id': stringHeader(
      'Id of this request in the service log. Quote it when you report a problem to the operator.',
      '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
    ),
    'Retry-After': {
      description: 'Whole seconds to wait before the next request (at least 1).',
      required: true,
      schema: jsonSchemaOf(z.int().min(1)),
    },
    RateLimit: stringHeader(
      'RateLimit field of the IETF draft draft-ietf-httpapi-ratelimit-headers (syntax of draft 09 and ' +
        "later): requests left (`r`) in this key's token bucket after this request, and seconds until " +
        'the next one comes back (`t`): within `t` seconds at most `r` more requests are accepted. ' +
        'Informative: a request may still be refused (429).',
      rateLimit(settings.RATE_LIMIT_BURST - 1, 1 / settings.RATE_LIMIT_PER_SECOND),
    ),
    'RateLimit-Policy': stringHeader(
      'RateLimit-Policy field of the same draft: the policy "default" is the token bucket of this key, ' +
        '`q` requests at once (the burst), refilled evenly so that an empty bucket is full again after ' +
        '`w` seconds.',
      rateLimitPolicy(settings),
    ),
    Allow: {
      description: 'The methods this path supports.',
      required: true,
      schema: jsonSchemaOf(z.literal('GET, HEAD')),
    },
    'WWW-Authenticate': stringHeader('Where the key belongs.', 'ApiKey header="X-API-Key"'),
    ETag: stringHeader('Strong entity tag of this document; send it back in If-None-Match.', '"3q2-7w"'),
    'Cache-Control': stringHeader(
      'How long the document may be reused without asking again.',
      'public, max-age=300',
    ),
  };
}

type HeaderName = keyof ReturnType<typeof headers>;

export const headerRefs = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, ref('headers', name)]));

/** A problem response of one status (an endpoint's own ones too, with an `id` to name it). */
export function problemResponse(
  description: string,
  extraHeaders: HeaderName[] = [],
  example?: unknown,
): ZodOpenApiResponseObject {
  return {
    description,
    headers: headerRefs('API-Version', 'X-Request-Id', ...extraHeaders),
    content: { [PROBLEM_MEDIA_TYPE]: { schema: Problem, ...(example ? { example } : {}) } },
  };
}

/** The problem responses of more than one endpoint, by name, with their status. */
export function problemResponses(settings: Settings) {
  const perMinute = settings.RATE_LIMIT_PER_SECOND * 60;
  return {
    Unauthorized: problemResponse(
      'The X-API-Key header is missing, or the key is unknown or revoked (a revocation takes effect ' +
        'within 10 seconds).',
      ['WWW-Authenticate'],
    ),
    Forbidden: problemResponse(
      'The key is valid but may read no tube at all. A key with at least one tube never gets 403: ' +
        'discovery lists what it may read, and any other tube is 404.',
    ),
    MethodNotAllowed: problemResponse('Only GET and HEAD are supported.', ['Allow']),
    TooManyRequests: problemResponse(
      `A limit of this key was reached: ${settings.RATE_LIMIT_BURST} requests at once, refilled at ` +
        `${perMinute} per minute, and at most ${settings.CONCURRENCY_LIMIT} requests in progress at a ` +
        'time; or, without a valid key, too many failed attempts from this address. Wait at least ' +
        'Retry-After seconds, back off further after repeated 429s, and add jitter.',
      ['Retry-After'],
    ),
    InternalServerError: problemResponse(
      'An unexpected error. The body says nothing about internals; X-Request-Id lets the operator ' +
        'find it in the log. A GET may be retried a limited number of times.',
    ),
    ServiceUnavailable: problemResponse(
      'The service is busy: every database connection stayed in use (by other long responses) for ' +
        `the whole wait of ${settings.DATABASE_WAIT_SECONDS} s. Nothing was read. Wait at least ` +
        'Retry-After seconds and retry, a limited number of times, with jitter.',
      ['Retry-After'],
    ),
  };
}

const STATUS = {
  Unauthorized: '401',
  Forbidden: '403',
  MethodNotAllowed: '405',
  TooManyRequests: '429',
  InternalServerError: '500',
  ServiceUnavailable: '503',
} as const satisfies Record<keyof ReturnType<typeof problemResponses>, string>;

/** References to shared problem responses, keyed by their status, for an operation's `responses`. */
export const problemRefs = (...names: (keyof typeof STATUS)[]) =>
  Object.fromEntries(names.map((name) => [STATUS[name], ref('responses', name)]));

/**
 * The responses of a data endpoint (one that needs a key and counts against its limits): its 200 with
 * `body` as JSON, and the problems every data endpoint can answer.
 */
export function dataResponses(description: string, body: z.ZodType) {
  return {
    '200': {
      description,
      headers: headerRefs('API-Version', 'X-Request-Id', 'RateLimit', 'RateLimit-Policy'),
      content: { 'application/json': { schema: body } },
    },
    ...problemRefs(
      'Unauthorized',
      'Forbidden',
      'TooManyRequests',
      'InternalServerError',
      'ServiceUnavailable',
    ),
  };
}

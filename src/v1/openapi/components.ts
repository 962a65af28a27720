/**
 * The components every endpoint shares: the response headers, the problem responses of more than one
 * endpoint, and the references the endpoints' parts of the document (their openapi.ts) use to name them.
 * Every example body is made by the code that writes the real one.
 */
import { z } from 'zod';
import type {
  oas31,
  ZodOpenApiContentObject,
  ZodOpenApiResponseObject,
  ZodOpenApiResponsesObject,
} from 'zod-openapi';
import type { Settings } from '../../config.js';
import { API_VERSION, V1_PREFIX } from '../../contract.js';
import { jsonSchemaOf } from '../../domain/jsonSchema.js';
import { EXAMPLE_TUBE_IDENTIFIER } from '../../engine/schemas.js';
import { arrow } from '../../engine/write/arrow.js';
import { CACHE_CONTROL, entityTag } from '../../http/conditional.js';
import { rateLimit, rateLimitPolicy, tooManyRequests } from '../../http/hooks/admitClient.js';
import { unauthorized } from '../../http/hooks/authenticate.js';
import { NEGOTIATED_VARY } from '../../http/negotiation.js';
import {
  expectationFailed,
  forbidden,
  type ProblemError,
  problemDocument,
  serviceBusy,
  unexpectedError,
} from '../../http/problems/problems.js';
import { PROBLEM_MEDIA_TYPE, Problem } from '../../http/problems/schema.js';
import { WELLS_URL } from '../wells/route.js';

/** The request id of the examples. */
const EXAMPLE_REQUEST_ID = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';

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
      EXAMPLE_REQUEST_ID,
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
    'WWW-Authenticate': stringHeader('Where the key belongs.', 'ApiKey header="X-API-Key"'),
    ETag: stringHeader(
      'Strong entity tag of this representation (its coding, format and parameters included); send it ' +
        'back in If-None-Match to get a 304 while it is unchanged.',
      entityTag(['example']),
    ),
    'Last-Modified': stringHeader(
      'When what this representation derives from last changed, to the second. Send it back in ' +
        'If-Modified-Since when you cannot keep the ETag.',
      new Date(Date.UTC(2024, 2, 1, 6, 0, 0)).toUTCString(),
    ),
    'Cache-Control': stringHeader(
      `How a response may be reused: \`${CACHE_CONTROL}\` for wells and series (keep it, but reuse it ` +
        'only after a 304), `public, max-age=300` for this document.',
      CACHE_CONTROL,
    ),
  };
}

type HeaderName = keyof ReturnType<typeof headers>;

export const headerRefs = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, ref('headers', name)]));

/** The body the service writes for `problem` on a request for `url` (a path under /v1): an example. */
export const problemExample = (problem: ProblemError, url: string) =>
  problemDocument(problem, V1_PREFIX + url.replace(':tubeIdentifier', EXAMPLE_TUBE_IDENTIFIER));

/** A problem response of one status (an endpoint's own ones too, with an `id` to name it). */
export function problemResponse(
  description: string,
  extraHeaders: HeaderName[],
  example: Problem,
): ZodOpenApiResponseObject {
  return {
    description,
    headers: headerRefs('API-Version', 'X-Request-Id', ...extraHeaders),
    content: { [PROBLEM_MEDIA_TYPE]: { schema: Problem, example } },
  };
}

/**
 * The problem responses of more than one endpoint, by name, with their status. Their examples are on
 * discovery's path: one example each, though the data endpoints share them.
 */
export function problemResponses(settings: Settings) {
  const perMinute = settings.RATE_LIMIT_PER_SECOND * 60;
  const example = (problem: ProblemError) => problemExample(problem, WELLS_URL);
  return {
    ClientError: problemResponse(
      'A request this service could not take as it came, before any operation saw it: not valid ' +
        'HTTP/1.1 or without Host (400), too slow to arrive (408), with an Expect other than ' +
        '100-continue (417), or with headers larger than the server accepts (431). `detail` says which.',
      [],
      example(expectationFailed()),
    ),
    Unauthorized: problemResponse(
      'The X-API-Key header is missing, or the key is unknown or revoked (a revocation takes effect ' +
        'within 10 seconds).',
      ['WWW-Authenticate'],
      example(unauthorized(false)),
    ),
    Forbidden: problemResponse(
      'The key is valid but may read no tube at all. A key with at least one tube never gets 403: ' +
        'discovery lists what it may read, and any other tube is 404.',
      [],
      example(forbidden()),
    ),
    TooManyRequests: problemResponse(
      `A limit of this key was reached: ${settings.RATE_LIMIT_BURST} requests at once, refilled at ` +
        `${perMinute} per minute, and at most ${settings.CONCURRENCY_LIMIT} requests in progress at a ` +
        'time; or, without a valid key, too many failed attempts from this address. Wait at least ' +
        'Retry-After seconds, back off further after repeated 429s, and add jitter.',
      ['Retry-After'],
      example(tooManyRequests('rate', 1 / settings.RATE_LIMIT_PER_SECOND)),
    ),
    InternalServerError: problemResponse(
      'An unexpected error. The body says nothing about internals; X-Request-Id lets the operator ' +
        'find it in the log. A GET may be retried a limited number of times.',
      [],
      example(unexpectedError(EXAMPLE_REQUEST_ID)),
    ),
    ServiceUnavailable: problemResponse(
      'The service is busy: every database connection stayed in use (by other long responses) for ' +
        `the whole wait of ${settings.DATABASE_WAIT_SECONDS} s. Nothing was read. Wait at least ` +
        'Retry-After seconds and retry, a limited number of times, with jitter. The same holds when the ' +
        'database cannot take the request at the moment (restarting, or its primary switching over), and ' +
        'when no database replica could answer yet (behind the primary, or behind the changedSince token).',
      ['Retry-After'],
      example(serviceBusy(settings.DATABASE_WAIT_SECONDS * 1000)),
    ),
  };
}

const STATUS = {
  ClientError: '4XX',
  Unauthorized: '401',
  Forbidden: '403',
  TooManyRequests: '429',
  InternalServerError: '500',
  ServiceUnavailable: '503',
} as const satisfies Record<keyof ReturnType<typeof problemResponses>, string>;

/** References to shared problem responses, keyed by their status, for an operation's `responses`. */
export const problemRefs = (...names: (keyof typeof STATUS)[]) =>
  Object.fromEntries(names.map((name) => [STATUS[name], ref('responses', name)]));

/** The request headers of a conditional GET or HEAD of the data endpoints. */
export const ConditionalHeaders = z.object({
  'If-None-Match': z
    .string()
    .optional()
    .meta({
      param: {
        description:
          'ETags of copies you hold (a list, or `*`), compared weakly: 304 when one is the current ' +
          'representation. Checked after the key, the limits (it takes a token), the parameters and ' +
          'access, so a 400, 403 or 404 is never hidden. A malformed value is ignored.',
      },
      examples: [entityTag(['example'])],
    }),
  'If-Modified-Since': z
    .string()
    .optional()
    .meta({
      param: {
        description:
          'An HTTP-date, usually a Last-Modified seen before: 304 when nothing changed since, to the ' +
          'second. Used only without If-None-Match; a malformed date is ignored.',
      },
      examples: [new Date(Date.UTC(2024, 2, 1, 6, 0, 0)).toUTCString()],
    }),
});

const VALIDATORS: HeaderName[] = ['ETag', 'Last-Modified', 'Cache-Control'];
const LIMITS: HeaderName[] = ['RateLimit', 'RateLimit-Policy'];

/** What an endpoint's responses have in common with others: headers, a 304, shared problems. */
export interface ResponseTraits {
  /** It answers conditional requests: its 200 carries the validators, and it answers 304. */
  conditional?: boolean;
  /** No key and no limit: no limits' headers, and none of the key's and the limits' problems. */
  public?: boolean;
  /** The 200's headers besides the shared ones. */
  headers?: Record<string, oas31.HeaderObject>;
}

/**
 * The responses of a data endpoint (one that needs a key and counts against its limits, unless
 * public): its 200 with `content` (each example what the service writes) and its own headers, its 304
 * when it answers conditional requests, and the problems every such endpoint can answer.
 */
export function dataResponses(
  description: string,
  content: ZodOpenApiContentObject,
  { conditional = true, public: open = false, headers = {} }: ResponseTraits = {},
): ZodOpenApiResponsesObject {
  const shared = headerRefs(
    'API-Version',
    'X-Request-Id',
    ...(open ? [] : LIMITS),
    ...(conditional ? VALIDATORS : []),
  );
  return {
    '200': { description, headers: { ...shared, ...headers }, content },
    ...(conditional && {
      '304': {
        description:
          'Not Modified: the copy named by If-None-Match (or If-Modified-Since) is current; reuse it. ' +
          'No body.',
        headers: shared,
      },
    }),
    ...(open
      ? problemRefs('ClientError', 'InternalServerError')
      : problemRefs(
          'Unauthorized',
          'Forbidden',
          'TooManyRequests',
          'ClientError',
          'InternalServerError',
          'ServiceUnavailable',
        )),
  };
}

/** Vary of a streamed series response, on every endpoint that writes one. */
export const VARY_HEADER = {
  description: 'The format follows Accept unless `format` is given, and the coding Accept-Encoding.',
  required: true,
  schema: jsonSchemaOf(z.literal(NEGOTIATED_VARY)),
};

/**
 * An Arrow IPC stream as a response body : raw bytes, so a string of that media type (OpenAPI
 * 3.1's binary body). A JSON document cannot hold the bytes themselves: each example holds them in
 * base64, and says so.
 */
export function arrowContent(
  description: string,
  examples: Record<string, { summary: string; bytes: Buffer }>,
) {
  return {
    [arrow.mediaType]: {
      schema: { type: 'string' as const, contentMediaType: arrow.mediaType, description },
      examples: Object.fromEntries(
        Object.entries(examples).map(([name, { summary, bytes }]) => [
          name,
          {
            summary,
            description: 'The bytes of the stream in base64; the body is the bytes themselves.',
            value: bytes.toString('base64'),
          },
        ]),
      ),
    },
  };
}

/**
 * The OpenAPI 3.1 document served at /v1/openapi.json, generated from the same zod schemas that
 * validate the parameters and compile the serializers, so it cannot drift from what the service does.
 * It also writes down, where a client reads them, the decisions the contract left open.
 */
import { z } from 'zod';
import type { Settings } from '../../config.js';
import { DATE_TIME_FORM } from '../../domain/datetime.js';
import { type JsonSchema, jsonSchemaOf } from '../../http/jsonSchema.js';
import { PROBLEM_MEDIA_TYPE } from '../../http/problems/schema.js';
import { rateLimit, rateLimitPolicy } from '../../limits/admitClient.js';
import { API_VERSION, V1_PREFIX } from '../contract.js';
import {
  count,
  MAX_INTERVAL_DAYS,
  MAX_INTERVAL_RULE,
  MOST_MINUTELY_MEASUREMENTS,
  SeriesQuery,
} from '../measurements/query.js';
import { MEASUREMENTS_URL } from '../measurements/route.js';
// Importing the schema modules registers their named schemas (Tube, Well, Measurement, …) in `components`.
import '../measurements/schemas.js';
import { WELLS_URL } from '../wells/route.js';
import { TubeIdentifier } from '../wells/schemas.js';
import { components } from './components.js';
import { OPENAPI_URL } from './route.js';

/** `/a/:b/c` → `/a/{b}/c`: OpenAPI names path parameters in braces. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const schemaRef = (name: string) => ref('schemas', name);

/** Every named schema, with references between them, from the one registry. */
function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, { uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, JsonSchema>;
  };
  return Object.fromEntries(
    Object.entries(schemas).map(([name, { $schema: _dialect, $id: _id, ...schema }]) => [name, schema]),
  );
}

const stringHeader = (description: string, example: string) => ({
  description,
  schema: jsonSchemaOf(z.string().meta({ examples: [example] })),
});

function headers(settings: Settings) {
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

const headerRefs = (...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, ref('headers', name)]));

/** A problem response of one status. */
function problemResponse(description: string, extraHeaders: string[] = [], example?: unknown) {
  return {
    description,
    headers: headerRefs('API-Version', 'X-Request-Id', ...extraHeaders),
    content: {
      [PROBLEM_MEDIA_TYPE]: { schema: schemaRef('Problem'), ...(example ? { example } : {}) },
    },
  };
}

function responses(settings: Settings) {
  const perMinute = settings.RATE_LIMIT_PER_SECOND * 60;
  return {
    BadRequest: problemResponse(
      'A query parameter is missing, repeated or malformed, `to` is not later than `from`, or the ' +
        `interval is longer than ${MAX_INTERVAL_DAYS} days. \`errors\` names each parameter to change and ` +
        'why: a missing or malformed one itself; `to` when it is not later than `from` or the interval is too long.',
      [],
      {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail: 'The query parameters are not valid: see errors.',
        instance: '/v1/groundwater-monitoring-tubes/2f1c7a4e-9b1d-4c3e-8f55-0a6d3c9e1b42/measurements',
        errors: { to: ['must be later than from'] },
      },
    ),
    Unauthorized: problemResponse(
      'The X-API-Key header is missing, or the key is unknown or revoked (a revocation takes effect ' +
        'within 10 seconds).',
      ['WWW-Authenticate'],
    ),
    Forbidden: problemResponse(
      'The key is valid but may read no tube at all. A key with at least one tube never gets 403: ' +
        'discovery lists what it may read, and any other tube is 404.',
    ),
    NotFound: problemResponse(
      'No tube with this identifier that this key may read. Unknown, malformed and hidden ' +
        'identifiers give the same answer; a stored identifier that now gives 404 is unavailable to ' +
        'this client.',
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

const problemRefs = (...names: (keyof ReturnType<typeof responses>)[]) =>
  Object.fromEntries(
    names.map((name) => [
      {
        BadRequest: '400',
        Unauthorized: '401',
        Forbidden: '403',
        NotFound: '404',
        MethodNotAllowed: '405',
        TooManyRequests: '429',
        InternalServerError: '500',
        ServiceUnavailable: '503',
      }[name],
      ref('responses', name),
    ]),
  );

const dataHeaders = () => headerRefs('API-Version', 'X-Request-Id', 'RateLimit', 'RateLimit-Policy');

/** GET with its HEAD twin (same statuses and headers, no body), plus 405 for every other method. */
function pathItem(get: Record<string, unknown> & { responses: Record<string, unknown> }) {
  const headResponses = Object.fromEntries(
    Object.entries(get.responses).map(([status, response]) => {
      if (typeof response !== 'object' || response === null || !('content' in response))
        return [status, response];
      const { content: _body, ...withoutBody } = response as Record<string, unknown>;
      return [status, withoutBody];
    }),
  );
  const notSupported = {
    summary: 'Not supported: the API is read-only',
    security: [],
    responses: problemRefs('MethodNotAllowed'),
  };
  return {
    get,
    head: {
      ...get,
      operationId: `${get.operationId as string}Head`,
      summary: `${get.summary as string} (headers only)`,
      responses: headResponses,
    },
    put: notSupported,
    post: notSupported,
    delete: notSupported,
    options: notSupported,
    patch: notSupported,
    trace: notSupported,
  };
}

function seriesParameters(): unknown[] {
  const query = jsonSchemaOf(SeriesQuery, { io: 'input' }) as {
    properties: Record<string, JsonSchema & { description?: string }>;
  };
  const { description: identifierDescription, ...identifierSchema } = jsonSchemaOf(
    TubeIdentifier,
  ) as JsonSchema & {
    description?: string;
  };
  return [
    {
      name: 'tubeIdentifier',
      in: 'path',
      required: true,
      description: `${identifierDescription} As listed by discovery.`,
      schema: identifierSchema,
    },
    ...Object.entries(query.properties).map(([name, { description, ...schema }]) => ({
      name,
      in: 'query',
      required: true,
      description,
      schema,
    })),
  ];
}

const DESCRIPTION = `Read-only access to groundwater level data: the monitoring wells and tubes an API key may
read, and the level measurements of one tube over an interval of up to ${MAX_INTERVAL_DAYS} days.

**Authentication.** Send the key in the \`X-API-Key\` header on both data endpoints. This document is
public. Missing, unknown or revoked key: 401. A key that may read no tube at all: 403 on both data
endpoints. A tube the key may not read is 404, exactly like an unknown or malformed identifier.

**Order of checks.** Route (404 unknown path, 405 other method) → key (401) → limits (429) →
parameters (400) → access (403/404). Requests with a valid key count against its limits whatever
their outcome.

**Date-times.** RFC 3339 (${DATE_TIME_FORM}): the offset is
required; any offset is accepted and normalised to UTC. Responses use UTC ending in \`Z\`, with a
fraction only when it is not zero. Microseconds are kept, never rounded. URL-encode \`+\` as \`%2B\`.

**Series.** \`from\` is inclusive, \`to\` exclusive; \`to - from\` is at most ${MAX_INTERVAL_RULE}
(one microsecond more is 400). An interval without measurements is 200 with \`"measurements": []\`.
There is no pagination: the whole interval comes in one streamed response (a year of 1-minute data
is ${count(MOST_MINUTELY_MEASUREMENTS)} measurements, about 30 MB). A response cut off before its end is
incomplete: retry it.

**Parameters.** Unknown query parameters are ignored (later versions may add optional ones); a
required parameter given twice is 400. Tube identifiers compare case-insensitively; responses carry
them in lower case.

**Errors** are \`application/problem+json\` (RFC 9457) with \`type\` \`about:blank\`, \`title\` the
HTTP reason phrase, \`status\`, \`detail\` and \`instance\` (the request path); \`errors\` only on 400.

**Busy.** A request that finds every database connection in use (by long responses of other clients)
waits a few seconds for one, then gets 503 with \`Retry-After\`: wait that long and retry.

**Methods.** GET and HEAD on every path; any other method is 405 with \`Allow: GET, HEAD\`.

**Versioning.** Every response carries \`API-Version\`. Clients ignore unknown fields and do not rely on
field order.`;

export function openApiDocument(settings: Settings): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Groundwater Monitoring Read API', version: API_VERSION, description: DESCRIPTION },
    servers: [{ url: V1_PREFIX, description: 'Version 1, on the host that serves this document.' }],
    security: [{ ApiKey: [] }],
    paths: {
      [openApiPath(WELLS_URL)]: pathItem({
        operationId: 'listWells',
        summary: 'Wells and tubes this key may read',
        description:
          'Every well with at least one tube the key may read, and only those tubes: nothing reveals ' +
          'hidden tubes, not even their count. Wells in natural order of name, tubes in natural order ' +
          'of number (`2` before `10`). The identifiers are the `tubeIdentifier` of the measurements endpoint.',
        responses: {
          '200': {
            description: 'The wells.',
            headers: dataHeaders(),
            content: { 'application/json': { schema: schemaRef('WellList') } },
          },
          ...problemRefs(
            'Unauthorized',
            'Forbidden',
            'TooManyRequests',
            'InternalServerError',
            'ServiceUnavailable',
          ),
        },
      }),
      [openApiPath(MEASUREMENTS_URL)]: pathItem({
        operationId: 'getMeasurements',
        summary: 'Level measurements of one tube over an interval',
        description:
          'The series of one tube in [from, to), oldest first, with the unit and vertical datum of the ' +
          'tube. Streamed: the series fields come first, then the measurements.',
        parameters: seriesParameters(),
        responses: {
          '200': {
            description: 'The series; `measurements` is `[]` when the interval holds none.',
            headers: dataHeaders(),
            content: { 'application/json': { schema: schemaRef('GroundwaterLevelSeries') } },
          },
          ...problemRefs(
            'BadRequest',
            'Unauthorized',
            'Forbidden',
            'NotFound',
            'TooManyRequests',
            'InternalServerError',
            'ServiceUnavailable',
          ),
        },
      }),
      [openApiPath(OPENAPI_URL)]: pathItem({
        operationId: 'getOpenApiDocument',
        summary: 'This document',
        description: 'Public (no key) and not counted against any limit. Supports If-None-Match.',
        security: [],
        parameters: [
          {
            name: 'If-None-Match',
            in: 'header',
            required: false,
            description: 'An ETag of this document seen before; 304 when it still matches.',
            schema: jsonSchemaOf(z.string()),
          },
        ],
        responses: {
          '200': {
            description: 'The OpenAPI 3.1 document.',
            headers: headerRefs('API-Version', 'X-Request-Id', 'ETag', 'Cache-Control'),
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          '304': {
            description: 'The document is unchanged since the ETag given in If-None-Match.',
            headers: headerRefs('API-Version', 'X-Request-Id', 'ETag', 'Cache-Control'),
          },
          ...problemRefs('InternalServerError'),
        },
      }),
    },
    components: {
      schemas: componentSchemas(),
      responses: responses(settings),
      headers: headers(settings),
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description:
            'A key issued by the operator, bound to the tubes it may read. A secret: keep it out of ' +
            'source code, browser code and logs.',
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document served at /v1/openapi.json, assembled from the parts of the endpoints (each
 * feature's openapi.ts: its operations, made from the same zod schemas that validate its parameters
 * and compile its serializers) and the components they share, so it cannot drift from what the service
 * does. zod-openapi turns the zod schemas into OpenAPI. The overview below writes down, where a client
 * reads them, the decisions the contract left open.
 */
import { readFileSync } from 'node:fs';
import { createDocument } from 'zod-openapi';
import type { Settings } from '../../config.js';
import {
  API_VERSION,
  count,
  MAX_INTERVAL_DAYS,
  MAX_INTERVAL_RULE,
  MOST_MINUTELY_MEASUREMENTS,
  V1_PREFIX,
} from '../../contract.js';
import { DATE_TIME_FORM } from '../../domain/datetime.js';
import { ALLOWED_METHODS } from '../../http/problems/problems.js';
import { Problem } from '../../http/problems/schema.js';
import { latestDocumentPart } from '../latest/openapi.js';
import { networkDocumentPart } from '../network/openapi.js';
import { ogcDocumentParts } from '../ogc/openapi.js';
import { seriesDocumentPart } from '../series/openapi.js';
import { wellsDocumentPart } from '../wells/openapi.js';
import { headers, problemResponses } from './components.js';
import { OPENAPI_VERSION, openApiDocumentPart, TITLE } from './ownPart.js';
import type { DocumentPart } from './pathItem.js';

/** The license of the package (an SPDX identifier), read where src/ and dist/ both find it. */
const LICENSE: string = JSON.parse(
  readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
).license;

/** Every endpoint's part, in the order of the document's paths. */
export const PARTS: readonly DocumentPart[] = [
  wellsDocumentPart,
  seriesDocumentPart,
  networkDocumentPart,
  latestDocumentPart,
  ...ogcDocumentParts,
  openApiDocumentPart,
];

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
waits a few seconds for one, then gets 503 with \`Retry-After\`: wait that long and retry. The same
503 comes while the database cannot take the request (restarting, or its primary switching over), and
when the service reads from database replicas and none can answer yet (all too far behind, or none has
replayed a \`changedSince\` token's snapshot): nothing was read, retry after \`Retry-After\`.

**Methods.** ${ALLOWED_METHODS} on every path; each path lists only its GET. HEAD answers as GET
does, with the same status and headers and no body (RFC 9110). Any other method is 405 with
\`Allow: ${ALLOWED_METHODS}\` and a problem document, before the key is looked at.

**Versioning.** Every response carries \`API-Version\`. Clients ignore unknown fields and do not rely on
field order.`;

export function openApiDocument(settings: Settings, parts = PARTS) {
  return createDocument({
    openapi: OPENAPI_VERSION,
    info: {
      title: TITLE,
      version: API_VERSION,
      description: DESCRIPTION,
      contact: { name: 'The operator of this service, who issued your API key.' },
      license: { name: LICENSE, identifier: LICENSE },
    },
    servers: [{ url: V1_PREFIX, description: 'Version 1, on the host that serves this document.' }],
    security: [{ ApiKey: [] }],
    // Once each: several parts (the paths of one resource, say) may share a tag.
    tags: [...new Map(parts.map((part) => [part.tag.name, part.tag])).values()],
    paths: Object.assign({}, ...parts.map((part) => part.paths)),
    components: {
      schemas: Object.assign({ Problem }, ...parts.map((part) => part.schemas)),
      responses: problemResponses(settings),
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
  });
}

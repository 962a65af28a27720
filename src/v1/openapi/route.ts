/**
 * The OpenAPI document's two renderings, GET /v1/openapi.json (3.1) and GET /v1/ogc/api (3.0, the OGC
 * `service-desc`): public, not limited, cacheable (strong ETag, If-None-Match → 304). Query parameters
 * are ignored, `api_key` too (QGIS appends it to every request, this one included).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../../config.js';
import { noneMatchHolds } from '../../http/conditional.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { OGC_OPENAPI_URL, OPENAPI_LINK_TYPE } from '../ogc/route.js';
import { openApiDocument } from './document.js';
import { openApi30 } from './openApi30.js';
import { OPENAPI_URL } from './ownPart.js';

const CACHE_CONTROL = 'public, max-age=300';

/** GET `url`: `document`, as `mediaType`. Built once: it depends only on the code and the limits settings. */
function documentRoute(app: FastifyInstance, url: string, mediaType: string, document: object): void {
  const body = Buffer.from(JSON.stringify(document));
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  app.route({
    method: READ_METHODS,
    url,
    handler: async (request, reply) => {
      reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
      if (noneMatchHolds(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type(mediaType).send(body);
    },
  });
}

export async function openApiRoute(app: FastifyInstance, options: { settings: Settings }): Promise<void> {
  // As JSON, the one form both renderings are read in.
  const document = JSON.parse(JSON.stringify(openApiDocument(options.settings)));
  documentRoute(app, OPENAPI_URL, 'application/json', document);
  documentRoute(app, OGC_OPENAPI_URL, OPENAPI_LINK_TYPE, openApi30(document));
}

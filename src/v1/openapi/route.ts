/** GET /v1/openapi.json: public, not limited, cacheable (strong ETag, If-None-Match → 304). */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../../config.js';
import { noneMatchHolds } from '../../http/conditional.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { openApiDocument } from './document.js';
import { OPENAPI_URL } from './ownPart.js';

const CACHE_CONTROL = 'public, max-age=300';

export async function openApiRoute(app: FastifyInstance, options: { settings: Settings }): Promise<void> {
  // Built once: the document depends only on the code and the limits settings.
  const body = Buffer.from(JSON.stringify(openApiDocument(options.settings)));
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  app.route({
    method: READ_METHODS,
    url: OPENAPI_URL,
    handler: async (request, reply) => {
      reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
      if (noneMatchHolds(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/json').send(body);
    },
  });
}

/** GET /v1/openapi.json: public, not limited, cacheable (strong ETag, If-None-Match → 304). */
import { createHash } from 'node:crypto';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Settings } from '../../config.js';
import { OPENAPI_PATH } from '../../http/paths.js';
import { openApiDocument } from './document.js';

const CACHE_CONTROL = 'public, max-age=300';

/** If-None-Match holds `*` or a list of entity tags, compared weakly (RFC 9110, 13.1.2). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

export function openApiRoute(
  app: FastifyInstance,
  options: { settings: Settings; methods: string[]; onRequest: onRequestHookHandler[] },
): void {
  // Built once: the document depends only on the code and the limits settings.
  const body = Buffer.from(JSON.stringify(openApiDocument(options.settings)));
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  app.route({
    method: options.methods,
    url: OPENAPI_PATH,
    exposeHeadRoute: false,
    onRequest: options.onRequest,
    handler: async (request, reply) => {
      reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
      if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/json').send(body);
    },
  });
}

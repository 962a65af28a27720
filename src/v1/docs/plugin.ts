/**
 * GET /v1/docs: the interactive reference, Swagger UI rendering the served OpenAPI document. Public and
 * not limited, like the document. Every asset comes from the service under /v1/docs/ (the UI's files
 * ship in @fastify/swagger-ui), so a deployment without internet serves it whole. Swagger UI loads the
 * document from ./json, which @fastify/swagger serves: openApiDocument(settings), the document of
 * /v1/openapi.json.
 */
import fastifySwagger, { type StaticDocumentSpec } from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config.js';
import { V1_PREFIX } from '../../contract.js';
import { notFound, pathOf } from '../../http/problems/problems.js';
import { openApiDocument } from '../openapi/document.js';
import { compressDocs } from './compression.js';
import { DOCS_CSP } from './csp.js';

export const DOCS_URL = '/docs';

/**
 * @fastify/static answers a folder of the UI's files with the distribution's own index.html, a page
 * that finds no document: a folder is no resource.
 */
function noFolders(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const isFolder = request.routeOptions.url?.endsWith('*') && pathOf(request.url).endsWith('/');
  done(isFolder ? notFound() : undefined);
}

export async function docsRoute(app: FastifyInstance, options: { settings: Settings }): Promise<void> {
  app.addHook('onRequest', noFolders);
  app.addHook('onSend', compressDocs);
  const document = openApiDocument(options.settings);
  // The plugin's types know OpenAPI 3.0 only; it serves the object as it is.
  const specification = { document } as unknown as StaticDocumentSpec;
  await app.register(fastifySwagger, { mode: 'static', specification });
  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_URL,
    // The page's links are absolute without a trailing slash, and the UI's routes do not know V1_PREFIX.
    indexPrefix: V1_PREFIX,
    staticCSP: DOCS_CSP,
    theme: { title: document.info.title },
    uiConfig: {
      // The page without Swagger UI's top bar, whose box would load a document from any address.
      layout: 'BaseLayout',
      // Only reads can be tried: any other method is 405.
      supportedSubmitMethods: ['get', 'head'],
    },
  });
}

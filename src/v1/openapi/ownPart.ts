/**
 * The document's own part of the OpenAPI document: its two renderings, GET /v1/openapi.json (3.1) and
 * GET /v1/ogc/api (3.0, the OGC API - Features `service-desc`; openApi30.ts derives it).
 */
import { z } from 'zod';
import { API_VERSION } from '../../contract.js';
import { jsonSchemaOf } from '../../domain/jsonSchema.js';
import { OGC_OPENAPI_URL, OPENAPI_LINK_TYPE } from '../ogc/route.js';
import { headerRefs, problemRefs } from './components.js';
import { OPENAPI_30_VERSION } from './openApi30.js';
import { type DocumentPart, openApiPath, readOnlyPathItem, type Tag } from './pathItem.js';

export const OPENAPI_URL = '/openapi.json';
export const OPENAPI_VERSION = '3.1.0';
export const TITLE = 'Groundwater Monitoring Read API';

const TAG: Tag = {
  name: 'Description',
  description: 'This OpenAPI document, to read or to generate a client from.',
};

const documentHeaders = () => headerRefs('API-Version', 'X-Request-Id', 'ETag', 'Cache-Control');

/** The GET of one rendering: OpenAPI `version` (3.1.0 or 3.0.3), sent as `mediaType`. */
const renderingPathItem = (rendering: {
  operationId: string;
  summary: string;
  description: string;
  version: string;
  mediaType: string;
}) => {
  const major = rendering.version.split('.').slice(0, 2).join('.');
  return readOnlyPathItem({
    operationId: rendering.operationId,
    tags: [TAG.name],
    summary: rendering.summary,
    description: `${rendering.description} Public (no key) and not counted against any limit; \`api_key\` is ignored. Supports If-None-Match.`,
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
        description: `The OpenAPI ${major} document.`,
        headers: documentHeaders(),
        content: {
          [rendering.mediaType]: {
            schema: {
              type: 'object',
              description: `An OpenAPI ${major} document: this one.`,
              required: ['openapi', 'info', 'paths'],
              properties: {
                openapi: { type: 'string', description: 'The version of OpenAPI it follows.' },
                info: { type: 'object', description: 'Title, version and overview of this API.' },
                paths: { type: 'object', description: 'The operations, by path.' },
              },
            },
            // Its beginning: the whole is what this operation returns.
            example: { openapi: rendering.version, info: { title: TITLE, version: API_VERSION }, paths: {} },
          },
        },
      },
      '304': {
        description: 'The document is unchanged since the ETag given in If-None-Match.',
        headers: documentHeaders(),
      },
      ...problemRefs('ClientError', 'InternalServerError'),
    },
  });
};

export const openApiDocumentPart: DocumentPart = {
  tag: TAG,
  paths: {
    [openApiPath(OPENAPI_URL)]: renderingPathItem({
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      description: 'This document, in OpenAPI 3.1.',
      version: OPENAPI_VERSION,
      mediaType: 'application/json',
    }),
    [openApiPath(OGC_OPENAPI_URL)]: renderingPathItem({
      operationId: 'getOgcOpenApiDocument',
      summary: 'This document in OpenAPI 3.0',
      description:
        'The same document in OpenAPI 3.0, derived from the 3.1 one: the `service-desc` of the OGC API - ' +
        'Features landing page, for the clients and validators that read 3.0 only.',
      version: OPENAPI_30_VERSION,
      mediaType: OPENAPI_LINK_TYPE,
    }),
  },
};

/** The document's own part of the OpenAPI document: GET /v1/openapi.json. */
import { z } from 'zod';
import { API_VERSION } from '../../contract.js';
import { jsonSchemaOf } from '../../domain/jsonSchema.js';
import { headerRefs, problemRefs } from './components.js';
import { type DocumentPart, openApiPath, readOnlyPathItem, type Tag } from './pathItem.js';

export const OPENAPI_URL = '/openapi.json';
export const OPENAPI_VERSION = '3.1.0';
export const TITLE = 'Groundwater Monitoring Read API';

const TAG: Tag = {
  name: 'Description',
  description: 'This OpenAPI document, to read or to generate a client from.',
};

const documentHeaders = () => headerRefs('API-Version', 'X-Request-Id', 'ETag', 'Cache-Control');

export const openApiDocumentPart: DocumentPart = {
  tag: TAG,
  paths: {
    [openApiPath(OPENAPI_URL)]: readOnlyPathItem({
      operationId: 'getOpenApiDocument',
      tags: [TAG.name],
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
          headers: documentHeaders(),
          content: {
            'application/json': {
              schema: {
                type: 'object',
                description: 'An OpenAPI 3.1 document: this one.',
                required: ['openapi', 'info', 'paths'],
                properties: {
                  openapi: { type: 'string', description: 'The version of OpenAPI it follows.' },
                  info: { type: 'object', description: 'Title, version and overview of this API.' },
                  paths: { type: 'object', description: 'The operations, by path.' },
                },
              },
              // Its beginning: the whole is what this operation returns.
              example: { openapi: OPENAPI_VERSION, info: { title: TITLE, version: API_VERSION }, paths: {} },
            },
          },
        },
        '304': {
          description: 'The document is unchanged since the ETag given in If-None-Match.',
          headers: documentHeaders(),
        },
        ...problemRefs('ClientError', 'InternalServerError'),
      },
    }),
  },
};

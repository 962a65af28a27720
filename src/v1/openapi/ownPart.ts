/** The document's own part of the OpenAPI document: GET /v1/openapi.json. */
import { z } from 'zod';
import { jsonSchemaOf } from '../../http/jsonSchema.js';
import { headerRefs, problemRefs } from './components.js';
import { type DocumentPart, openApiPath, readOnlyPathItem } from './pathItem.js';

export const OPENAPI_URL = '/openapi.json';

const documentHeaders = () => headerRefs('API-Version', 'X-Request-Id', 'ETag', 'Cache-Control');

export const openApiDocumentPart: DocumentPart = {
  paths: {
    [openApiPath(OPENAPI_URL)]: readOnlyPathItem({
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
          headers: documentHeaders(),
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '304': {
          description: 'The document is unchanged since the ETag given in If-None-Match.',
          headers: documentHeaders(),
        },
        ...problemRefs('InternalServerError'),
      },
    }),
  },
};

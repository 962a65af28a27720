/**
 * The measurements endpoint's part of the OpenAPI document: its operation, with the parameters of the
 * query schema the route validates with, its own problem responses, and the schemas of its body.
 */

import { z } from 'zod';
import type { ZodOpenApiOverrideMetaContext, ZodOpenApiResponseObject } from 'zod-openapi';
import { problemDocument, refusalOf } from '../../http/problems/problems.js';
import { V1_PREFIX } from '../contract.js';
import { dataResponses, problemResponse } from '../openapi/components.js';
import { type DocumentPart, openApiPath, readOnlyPathItem } from '../openapi/pathItem.js';
import { EXAMPLE_TUBE_IDENTIFIER, TubeIdentifier } from '../wells/schemas.js';
import { MAX_INTERVAL_DAYS, SeriesQuery } from './query.js';
import { MEASUREMENTS_URL } from './route.js';
import { GroundwaterLevelSeries, Measurement } from './schemas.js';

/** The path parameter as documented (the route reads it itself: a malformed one is a 404, route.ts). */
const pathParameters = z.object({
  tubeIdentifier: TubeIdentifier.meta({
    param: { description: `${TubeIdentifier.description} As listed by discovery.` },
    // Said once, on the parameter.
    override: ({ jsonSchema }: ZodOpenApiOverrideMetaContext) => {
      delete jsonSchema.description;
    },
  }),
});

/** The 400 this endpoint answers when `to` is not later than `from`, as the service writes it. */
function refusedExample() {
  const refusal = refusalOf(SeriesQuery, { from: '2024-01-02T00:00:00Z', to: '2024-01-01T00:00:00Z' });
  const instance = V1_PREFIX + MEASUREMENTS_URL.replace(':tubeIdentifier', EXAMPLE_TUBE_IDENTIFIER);
  return refusal && problemDocument(refusal, instance);
}

const badRequest: ZodOpenApiResponseObject = {
  id: 'BadRequest',
  ...problemResponse(
    'A query parameter is missing, repeated or malformed, `to` is not later than `from`, or the ' +
      `interval is longer than ${MAX_INTERVAL_DAYS} days. \`errors\` names each parameter to change and ` +
      'why: a missing or malformed one itself; `to` when it is not later than `from` or the interval is too long.',
    [],
    refusedExample(),
  ),
};

const notFound: ZodOpenApiResponseObject = {
  id: 'NotFound',
  ...problemResponse(
    'No tube with this identifier that this key may read. Unknown, malformed and hidden ' +
      'identifiers give the same answer; a stored identifier that now gives 404 is unavailable to ' +
      'this client.',
  ),
};

export const measurementsDocumentPart: DocumentPart = {
  paths: {
    [openApiPath(MEASUREMENTS_URL)]: readOnlyPathItem({
      operationId: 'getMeasurements',
      summary: 'Level measurements of one tube over an interval',
      description:
        'The series of one tube in [from, to), oldest first, with the unit and vertical datum of the ' +
        'tube. Streamed: the series fields come first, then the measurements.',
      requestParams: { path: pathParameters, query: SeriesQuery },
      responses: {
        ...dataResponses(
          'The series; `measurements` is `[]` when the interval holds none.',
          GroundwaterLevelSeries,
        ),
        '400': badRequest,
        '404': notFound,
      },
    }),
  },
  schemas: { Measurement, GroundwaterLevelSeries },
};

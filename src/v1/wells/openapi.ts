/** Discovery's part of the OpenAPI document: its operation, and the schemas that write its body. */

import { groupWells } from '../../domain/discoveryOrder.js';
import { EXAMPLE_TUBE_IDENTIFIER } from '../../engine/schemas.js';
import { ConditionalHeaders, dataResponses } from '../openapi/components.js';
import { type DocumentPart, openApiPath, readOnlyPathItem, type Tag } from '../openapi/pathItem.js';
import { serializeWells, WELLS_URL } from './route.js';
import { Tube, Well, WellList } from './schemas.js';

const TAG: Tag = {
  name: 'Discovery',
  description: 'The wells and tubes an API key may read: where a client finds its tube identifiers.',
};

/** Discovery's body for a key that may read three tubes of two wells, as the service writes it. */
const example = () =>
  JSON.parse(
    serializeWells(
      groupWells([
        { wellName: 'Veenhof 10', identifier: '8d0e5b7a-3c21-4f6e-9a47-1b2c3d4e5f60', number: '1' },
        { wellName: 'Veenhof 2', identifier: '5a9e2c1d-7b3f-4e80-a1c2-d3e4f5a6b7c8', number: '10' },
        { wellName: 'Veenhof 2', identifier: EXAMPLE_TUBE_IDENTIFIER, number: '2' },
      ]),
    ),
  );

export const wellsDocumentPart: DocumentPart = {
  tag: TAG,
  paths: {
    [openApiPath(WELLS_URL)]: readOnlyPathItem({
      operationId: 'listWells',
      tags: [TAG.name],
      summary: 'Wells and tubes this key may read',
      description:
        'Every well with at least one tube the key may read, and only those tubes: nothing reveals ' +
        'hidden tubes, not even their count. Wells in natural order of name, tubes in natural order ' +
        'of number (`2` before `10`). The identifiers are the `tubeIdentifier` of the measurements endpoint.',
      requestParams: { header: ConditionalHeaders },
      responses: dataResponses('The wells.', WellList, example()),
    }),
  },
  schemas: { Tube, Well, WellList },
};

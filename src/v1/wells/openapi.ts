/** Discovery's part of the OpenAPI document: its operation, and the schemas that write its body. */
import { dataResponses } from '../openapi/components.js';
import { type DocumentPart, openApiPath, readOnlyPathItem } from '../openapi/pathItem.js';
import { WELLS_URL } from './route.js';
import { Tube, Well, WellList } from './schemas.js';

export const wellsDocumentPart: DocumentPart = {
  paths: {
    [openApiPath(WELLS_URL)]: readOnlyPathItem({
      operationId: 'listWells',
      summary: 'Wells and tubes this key may read',
      description:
        'Every well with at least one tube the key may read, and only those tubes: nothing reveals ' +
        'hidden tubes, not even their count. Wells in natural order of name, tubes in natural order ' +
        'of number (`2` before `10`). The identifiers are the `tubeIdentifier` of the measurements endpoint.',
      responses: dataResponses('The wells.', WellList),
    }),
  },
  schemas: { Tube, Well, WellList },
};

/** Discovery's part of the OpenAPI document: its operation, and the schemas that write its bodies. */

import { EXAMPLE_TUBE_IDENTIFIER } from '../../engine/schemas.js';
import { invalidParameter } from '../../http/problems/problems.js';
import { parseBbox } from '../bbox.js';
import { VARY_HEADER } from '../openapi/components.js';
import { dataPart } from '../openapi/dataPart.js';
import type { Tag } from '../openapi/pathItem.js';
import { DISCOVERY_FORMATS, discoveryDocument, writeWells } from './document.js';
import { WELLS_URL, WellsQuery } from './route.js';
import { Location, Tube, Well, WellFeature, WellFeatureCollection, WellList } from './schemas.js';

const TAG: Tag = {
  name: 'Discovery',
  description: 'The wells and tubes an API key may read: where a client finds its tube identifiers.',
};

const UNKNOWN = { groundLevel: null, tubeTop: null, screenTop: null, screenBottom: null };

/**
 * Discovery's document for a key that may read three tubes of two wells, one well with a location
 * and a tube with its elevations, the other with neither.
 */
const document = discoveryDocument([
  {
    wellName: 'Veenhof 10',
    longitude: null,
    latitude: null,
    identifier: '8d0e5b7a-3c21-4f6e-9a47-1b2c3d4e5f60',
    number: '1',
    unit: 'cm',
    verticalDatum: 'TAW',
    ...UNKNOWN,
  },
  {
    wellName: 'Veenhof 2',
    longitude: 5.38763,
    latitude: 52.15616,
    identifier: '5a9e2c1d-7b3f-4e80-a1c2-d3e4f5a6b7c8',
    number: '10',
    unit: 'm',
    verticalDatum: 'NAP',
    ...UNKNOWN,
  },
  {
    wellName: 'Veenhof 2',
    longitude: 5.38763,
    latitude: 52.15616,
    identifier: EXAMPLE_TUBE_IDENTIFIER,
    number: '2',
    unit: 'm',
    verticalDatum: 'NAP',
    groundLevel: 1.02,
    tubeTop: 1.35,
    screenTop: -8.5,
    screenBottom: -9.5,
  },
]);
/** The example as the service writes it in `format`. */
const written = (format: (typeof DISCOVERY_FORMATS)[number]['name']) =>
  JSON.parse(writeWells(document, format).toString());

const [json, geojson] = DISCOVERY_FORMATS;
const badBbox = parseBbox('5.6,51.8,4.2,52.6');

export const wellsDocumentPart = dataPart({
  url: WELLS_URL,
  tag: TAG,
  operationId: 'listWells',
  summary: 'Wells and tubes this key may read',
  description:
    'Every well with at least one tube the key may read, and only those tubes: nothing reveals ' +
    'hidden tubes, not even their count. Wells in natural order of name, tubes in natural order ' +
    'of number (`2` before `10`). The identifiers are the `tubeIdentifier` of the measurements ' +
    'endpoint. A well has its `location` and a tube its elevations when the operator stated them; ' +
    'unknown values are left out. With `bbox`, only the wells whose location lies inside the box; ' +
    'none is a 200 with an empty list (or an empty FeatureCollection).',
  query: WellsQuery,
  ok: {
    description:
      'The wells: a JSON list, or a GeoJSON FeatureCollection (`format=geojson`, or `Accept: ' +
      'application/geo+json`) with the same wells in the same order. Each body has an ETag of its own.',
    headers: { Vary: VARY_HEADER },
    content: {
      [json.mediaType]: { schema: WellList, example: written('json') },
      [geojson.mediaType]: { schema: WellFeatureCollection, example: written('geojson') },
    },
  },
  problems: {
    '400': {
      description:
        '`format` or `bbox` is malformed or given twice. `errors` names each parameter to change and why.',
      problem: invalidParameter('bbox', badBbox.ok ? '' : badBbox.reason),
    },
  },
  schemas: { Location, Tube, Well, WellList, WellFeature, WellFeatureCollection },
});

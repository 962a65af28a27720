/**
 * The part of `/v1/ogc` in the OpenAPI document (its `service-desc`): the landing page and the
 * conformance (public), the collections, and each collection's items and feature paths literally, each
 * with its own query schema (so its own `limit` maximum, which QGIS reads there). The examples are
 * written by the code that writes the real bodies.
 */
import { z } from 'zod';
import { EXAMPLE_TUBE_IDENTIFIER } from '../../engine/schemas.js';
import { invalidParameter } from '../../http/problems/problems.js';
import { dataPart } from '../openapi/dataPart.js';
import type { DocumentPart, Tag } from '../openapi/pathItem.js';
import type { TubeInView } from '../tubesInView.js';
import { latestFeature, measurementFeature, tubeFeature } from './features.js';
import {
  COLLECTION_IDS,
  type CollectionId,
  CRS84,
  FeatureQuery,
  ITEMS_QUERIES,
  MetadataQuery,
} from './query.js';
import {
  COLLECTION_URL,
  COLLECTIONS,
  COLLECTIONS_URL,
  CONFORMANCE_URL,
  collectionOf,
  conformance,
  featureCollection,
  itemsUrl,
  landingPage,
  OGC_URL,
} from './route.js';
import { FEATURE_ID, Point, PROPERTIES } from './schemas.js';

const TAG: Tag = {
  name: 'OGC API - Features',
  description:
    'The tubes, their latest measurements and every measurement as OGC API - Features collections, ' +
    'for GIS clients (QGIS, GDAL/OGR, OWSLib). The key may be given as the header or as `api_key`.',
};

const BASE = 'https://groundwater.example.org/v1';
const GEOJSON = 'application/geo+json';
const JSON_TYPE = 'application/json';

const EXAMPLE_TUBE: TubeInView = {
  id: 1,
  identifier: EXAMPLE_TUBE_IDENTIFIER,
  number: '2',
  unit: 'm',
  verticalDatum: 'NAP',
  seriesVersion: '1',
  seriesChangedAt: new Date(0),
  wellName: 'Veenhof 2',
  wellChangedAt: new Date(0),
  wellId: 1,
  longitude: 5.38763,
  latitude: 52.15616,
  locationChangedAt: null,
  groundLevel: 1.02,
  tubeTop: 1.35,
  screenTop: -8.5,
  screenBottom: null,
};
const EXAMPLE_ROW = { tubeId: 1, seconds: 1_709_251_200, micros: 0, value: -1.234, status: 0 };

const Link = z.strictObject({
  rel: z.string(),
  type: z.string(),
  title: z.string().optional(),
  href: z.url(),
});
const Links = z.array(Link);
const EXAMPLE_FEATURE = {
  tubes: tubeFeature(EXAMPLE_TUBE),
  latest: latestFeature(EXAMPLE_TUBE, EXAMPLE_ROW),
  measurements: measurementFeature(EXAMPLE_TUBE, EXAMPLE_ROW),
};

const featureOf = (id: CollectionId) =>
  z
    .strictObject({
      type: z.literal('Feature'),
      id: z.string().meta({ description: FEATURE_ID[id] }),
      geometry: Point,
      properties: PROPERTIES[id],
    })
    .meta({ description: `A feature of \`${id}\`: ${COLLECTIONS[id].description}` });

const name = (id: CollectionId) => `${id[0]!.toUpperCase()}${id.slice(1)}`;

const Extent = z.strictObject({
  spatial: z.strictObject({ bbox: z.array(z.array(z.number()).length(4)), crs: z.string() }).optional(),
  temporal: z.strictObject({ interval: z.array(z.array(z.string()).length(2)), trs: z.string() }).optional(),
});
const Collection = z
  .strictObject({
    id: z.enum(COLLECTION_IDS),
    title: z.string(),
    description: z.string(),
    itemType: z.literal('feature'),
    crs: z.array(z.literal(CRS84)),
    extent: Extent.optional().meta({
      description: "Over the key's own features; left out when it has none.",
    }),
    links: Links,
  })
  .meta({ description: 'A collection of `/v1/ogc`, with its `items` link.' });

const EXAMPLE_EXTENT = {
  spatial: { bbox: [[5.38763, 52.15616, 5.38763, 52.15616]], crs: CRS84 },
  temporal: {
    interval: [['2024-01-01T00:00:00Z', EXAMPLE_FEATURE.latest.properties.observedAt as string]],
    trs: 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian',
  },
};

const badLimit = invalidParameter('limit', 'must be a whole number from 1');

/** A path of its own for each collection's items and features. */
function collectionParts(id: CollectionId): DocumentPart[] {
  const feature = featureOf(id);
  const items = itemsUrl(id);
  const page: unknown = JSON.parse(
    featureCollection(Buffer.from(JSON.stringify(EXAMPLE_FEATURE[id])), 1, 1, [
      { rel: 'self', type: GEOJSON, title: 'This page', href: `${BASE}${items}?limit=1` },
    ]).toString('utf8'),
  );
  return [
    dataPart({
      url: items,
      tag: TAG,
      operationId: `get${name(id)}Items`,
      summary: `${COLLECTIONS[id].title}: a page of features`,
      description:
        `${COLLECTIONS[id].description} A page at a time: \`next\` links (absolute, keeping every ` +
        'filter, never the key) follow while more features follow. Any parameter not listed is 400.',
      query: ITEMS_QUERIES[id],
      conditional: false,
      ok: {
        description: 'A page of features, with `numberMatched` and `numberReturned`.',
        content: {
          [GEOJSON]: {
            schema: z.strictObject({
              type: z.literal('FeatureCollection'),
              features: z.array(feature),
              numberMatched: z.int().min(0),
              numberReturned: z.int().min(0),
              timeStamp: z.string(),
              links: Links,
            }),
            example: page,
          },
        },
      },
      problems: {
        '400': {
          description: 'A parameter is malformed, unknown, or a cursor not of this key and filter.',
          problem: badLimit,
        },
      },
      schemas: { [`${name(id)}Feature`]: feature },
    }),
    dataPart({
      url: `${items}/:featureId`,
      tag: TAG,
      operationId: `get${name(id)}Feature`,
      summary: `${COLLECTIONS[id].title}: one feature`,
      description: `One feature by its \`id\` (${FEATURE_ID[id]}) A tube this key may not read is 404.`,
      path: z.object({ featureId: z.string().meta({ param: { description: FEATURE_ID[id] } }) }),
      query: FeatureQuery,
      conditional: false,
      ok: {
        description: 'The feature.',
        content: {
          [GEOJSON]: {
            schema: feature.extend({ links: Links }),
            example: {
              ...EXAMPLE_FEATURE[id],
              links: [{ rel: 'collection', type: JSON_TYPE, href: `${BASE}${OGC_URL}/collections/${id}` }],
            },
          },
        },
      },
    }),
  ];
}

const landingSchema = z.strictObject({ title: z.string(), description: z.string(), links: Links });

export const ogcDocumentParts: DocumentPart[] = [
  dataPart({
    url: OGC_URL,
    tag: TAG,
    operationId: 'getOgcLandingPage',
    summary: 'The landing page of the OGC API - Features service',
    description:
      'Links to this document in OpenAPI 3.0 (`service-desc`, `/ogc/api`), the conformance and the ' +
      'collections. Also at `/ogc/`.',
    query: MetadataQuery,
    conditional: false,
    public: true,
    ok: {
      description: 'The landing page.',
      content: { [JSON_TYPE]: { schema: landingSchema, example: landingPage(BASE) } },
    },
  }),
  dataPart({
    url: CONFORMANCE_URL,
    tag: TAG,
    operationId: 'getOgcConformance',
    summary: 'The conformance classes',
    description: 'OGC API - Features Part 1: core, GeoJSON and OpenAPI 3.0.',
    query: MetadataQuery,
    conditional: false,
    public: true,
    ok: {
      description: 'The conformance classes.',
      content: {
        [JSON_TYPE]: { schema: z.strictObject({ conformsTo: z.array(z.url()) }), example: conformance() },
      },
    },
  }),
  dataPart({
    url: COLLECTIONS_URL,
    tag: TAG,
    operationId: 'getOgcCollections',
    summary: 'The collections',
    description: "`tubes`, `latest` and `measurements`, each with its extent over the key's own features.",
    query: MetadataQuery,
    conditional: false,
    ok: {
      description: 'The collections.',
      content: {
        [JSON_TYPE]: {
          schema: z.strictObject({ links: Links, collections: z.array(Collection) }),
          example: {
            links: [{ rel: 'self', type: JSON_TYPE, href: `${BASE}${COLLECTIONS_URL}` }],
            collections: COLLECTION_IDS.map((id) =>
              collectionOf(BASE, id, id === 'tubes' ? { spatial: EXAMPLE_EXTENT.spatial } : EXAMPLE_EXTENT),
            ),
          },
        },
      },
    },
    schemas: { OgcCollection: Collection },
  }),
  dataPart({
    url: COLLECTION_URL,
    tag: TAG,
    operationId: 'getOgcCollection',
    summary: 'One collection',
    description: 'A collection with its extent; an unknown one is 404.',
    path: z.object({
      collectionId: z.enum(COLLECTION_IDS).meta({ param: { description: 'The collection.' } }),
    }),
    query: MetadataQuery,
    conditional: false,
    ok: {
      description: 'The collection.',
      content: { [JSON_TYPE]: { schema: Collection, example: collectionOf(BASE, 'latest', EXAMPLE_EXTENT) } },
    },
  }),
  ...COLLECTION_IDS.flatMap(collectionParts),
];

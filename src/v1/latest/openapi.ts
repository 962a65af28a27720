/**
 * Latest's part of the OpenAPI document: its operation, with the parameters of the query schema the
 * route validates with, its own problem responses, and its body in each format; every example is
 * written by the writer that writes the real response.
 */
import { z } from 'zod';
import type { ZodOpenApiContentObject } from 'zod-openapi';
import { batchOf } from '../../engine/batch.js';
import {
  EXAMPLE_TUBE_IDENTIFIER,
  Measurement,
  SeriesHead,
  STATUSES,
  TubeIdentifier,
} from '../../engine/schemas.js';
import { arrow } from '../../engine/write/arrow.js';
import { csv } from '../../engine/write/csv.js';
import { geojson } from '../../engine/write/geojson.js';
import { json } from '../../engine/write/json.js';
import type { LatestTube, LatestWriter } from '../../engine/write/writer.js';
import { fileAttachment } from '../../http/attachment.js';
import { refusalOf } from '../../http/problems/problems.js';
import { arrowContent, VARY_HEADER } from '../openapi/components.js';
import { dataPart, fileNameHeader, listedTubeMissing } from '../openapi/dataPart.js';
import type { Tag } from '../openapi/pathItem.js';
import { MAX_LISTED_TUBES } from '../tubesInView.js';
import { LatestQuery } from './query.js';
import { LATEST_FILE_STEM, LATEST_URL } from './route.js';

const TAG: Tag = {
  name: 'Latest',
  description:
    'The latest measurement of each tube: the current state of a network, for a map or a dashboard.',
};

const { observedAt, value } = Measurement.shape;
const { unit, verticalDatum } = SeriesHead.shape;

/** The status of a measurement, as include=status writes it. */
const Status = z.enum(STATUSES).meta({
  description:
    'The status of the measurement: `approved` (checked and accepted), `provisional` (not yet ' +
    'checked) or `rejected` (checked and found wrong, kept for the record). Only with `include=status`.',
});

const latestFields = {
  tubeIdentifier: TubeIdentifier,
  observedAt: observedAt.meta({
    description: 'Moment of the latest measurement of the tube that passes `status`. RFC 3339 in UTC.',
  }),
  value,
  status: Status.optional(),
  unit,
  verticalDatum,
};

// Strict, as every object the service writes: a field a client does not know is a new version's.
export const LatestMeasurement = z.strictObject(latestFields).meta({
  description: 'The latest measurement of one tube, with its unit and vertical datum.',
});

export const GroundwaterLevelLatest = z.array(LatestMeasurement).meta({
  description:
    'The latest measurement of each selected tube that has one passing `status`, in discovery order ' +
    '(wells by name, tubes by number, both natural); a tube without one is left out, and `[]` when none has.',
});

const Point = z
  .strictObject({
    type: z.literal('Point'),
    coordinates: z
      .array(z.number())
      .length(2)
      .meta({ description: 'Longitude and latitude, WGS 84 decimal degrees (RFC 7946).' }),
  })
  .meta({ description: "The tube's well's location." });

export const LatestFeatureCollection = z
  .strictObject({
    type: z.literal('FeatureCollection'),
    features: z.array(
      z.strictObject({
        type: z.literal('Feature'),
        geometry: Point.nullable().meta({ description: "The well's location; null when unknown." }),
        properties: z.strictObject({
          ...latestFields,
          wellName: z.string().meta({ description: "The name of the tube's well, as in discovery." }),
          tubeNumber: z
            .string()
            .meta({ description: 'The number of the tube in its well, as in discovery.' }),
        }),
      }),
    ),
  })
  .meta({
    description:
      'GeoJSON (RFC 7946): one Feature per element of the JSON array, in its order, its properties the ' +
      "element and the tube's well name and number.",
  });

const SECOND_TUBE = '5a9e2c1d-7b3f-4e80-a1c2-d3e4f5a6b7c8';

/** Two tubes of two wells, one with a location. */
const EXAMPLE_TUBES: LatestTube[] = [
  {
    tubeIdentifier: EXAMPLE_TUBE_IDENTIFIER,
    unit: 'm',
    verticalDatum: 'NAP',
    wellName: 'B 10',
    tubeNumber: '1',
    location: [5.1214, 52.0907],
  },
  {
    tubeIdentifier: SECOND_TUBE,
    unit: 'cm',
    verticalDatum: 'TAW',
    wellName: 'B 2',
    tubeNumber: '1',
    location: undefined,
  },
];

/** The latest of the example tubes, written by `writer` as the service writes it. */
function written(writer: LatestWriter): Buffer {
  const rows = batchOf([
    { observedAt: '2024-03-01T00:45:00Z', value: -1.26, status: 'approved' },
    { observedAt: '2024-02-29T23:00:00Z', value: 212.5, status: 'provisional' },
  ]);
  rows.tube.set([0, 1]);
  return Buffer.concat([writer.open(EXAMPLE_TUBES), writer.batch(rows, true), writer.close()]);
}

const plain = { statuses: undefined };
const example = JSON.parse(written(json.latest(plain)).toString());
const withStatus = JSON.parse(written(json.latest({ statuses: STATUSES })).toString());
const geoExample = JSON.parse(written(geojson.latest(plain)).toString());
const SUMMARY = 'Two tubes, each with its latest measurement';

/** The body in each format; typed, as the examples' names differ from one format to the next. */
const content: ZodOpenApiContentObject = {
  'application/json': {
    schema: GroundwaterLevelLatest,
    examples: {
      latest: { summary: SUMMARY, value: example },
      withStatus: { summary: `${SUMMARY}, with include=status`, value: withStatus },
    },
  },
  [csv.mediaType]: {
    schema: z.string().meta({
      description:
        'RFC 4180 with CRLF line ends and a header line: `tubeIdentifier,observedAt,value,unit,verticalDatum`, ' +
        'with `status` after `value` with `include=status`; one line per tube, in discovery order. Only ' +
        'the header line when no tube has a measurement. A whole file ends in CRLF.',
    }),
    example: written(csv.latest(plain)).toString(),
  },
  ...arrowContent(
    "An Apache Arrow IPC stream of the JSON's columns, none nullable: `tubeIdentifier`, `unit` and " +
      '`verticalDatum` dictionary-encoded (int32 indices into utf8), `status` with `include=status` ' +
      '(int8 indices into utf8), each dictionary sent once, whole, before the first record batch. The ' +
      "identifiers' dictionary holds every selected tube, also one without a row. A cut-off stream " +
      'lacks its end-of-stream marker, and readers refuse it.',
    {
      latest: { summary: SUMMARY, bytes: written(arrow.latest(plain)) },
      withStatus: {
        summary: `${SUMMARY}, with include=status`,
        bytes: written(arrow.latest({ statuses: STATUSES })),
      },
    },
  ),
  [geojson.mediaType]: {
    schema: LatestFeatureCollection,
    examples: { latest: { summary: SUMMARY, value: geoExample } },
  },
};

export const latestDocumentPart = dataPart({
  url: LATEST_URL,
  tag: TAG,
  operationId: 'getLatestMeasurements',
  summary: 'The latest measurement of each tube',
  description:
    'For every selected tube (the listed ones, or every tube the key may read; with `bbox`, of the ' +
    'wells inside the box) that has a measurement ' +
    'passing `status`: its latest such measurement, read from one snapshot, tubes in discovery order. ' +
    'No interval: `from` and `to` are ignored like any unknown parameter. The request costs one token ' +
    'and holds one concurrency slot. The ETag is strong: the same tag, the same bytes.',
  query: LatestQuery,
  ok: {
    description:
      'The latest measurement of each selected tube, in discovery order. As CSV (`format=csv`, or `Accept: ' +
      'text/csv`), as an Arrow IPC stream (`format=arrow`, or `Accept: application/vnd.apache.arrow.stream`) ' +
      'or as GeoJSON (`format=geojson`, or `Accept: application/geo+json`) when asked for, by the weights of ' +
      'Accept (a tie: JSON, then CSV, then Arrow, then GeoJSON).',
    headers: {
      Vary: VARY_HEADER,
      'Content-Disposition': fileNameHeader(
        `CSV and Arrow: a file name \`${LATEST_FILE_STEM}.csv\` (\`.arrows\` for Arrow).`,
        fileAttachment(LATEST_FILE_STEM, 'csv'),
      ),
    },
    content,
  },
  problems: {
    '400': {
      description:
        '`tubes` holds an empty item, a duplicate or more than ' +
        `${MAX_LISTED_TUBES} identifiers, \`bbox\` is not a box, \`status\` or \`include\` is not a list of known names, \`format\` ` +
        'is unknown, or a parameter is given twice. `errors` names each parameter to change and why.',
      problem: refusalOf(LatestQuery, { status: 'approve' })!,
    },
    '404': listedTubeMissing(SECOND_TUBE),
  },
  schemas: { GroundwaterLevelLatest, LatestMeasurement, LatestFeatureCollection },
});

/**
 * The network endpoint's part of the OpenAPI document: its operation, with the parameters of the query
 * schema the route validates with, its own problem responses, and its body's schema; every example is
 * written by the writer that writes the real response.
 */
import { z } from 'zod';
import { formatInstant } from '../../domain/datetime.js';
import { jsonSchemaOf } from '../../domain/jsonSchema.js';
import { batchOf, type MeasurementValues } from '../../engine/batch.js';
import { EXAMPLE_TUBE_IDENTIFIER, GroundwaterLevelNetwork, type SeriesHead } from '../../engine/schemas.js';
import { arrow } from '../../engine/write/arrow.js';
import { csv } from '../../engine/write/csv.js';
import { json } from '../../engine/write/json.js';
import type { NetworkWriter } from '../../engine/write/writer.js';
import { attachment } from '../../http/attachment.js';
import { invalidParameter } from '../../http/problems/problems.js';
import { issueSyncToken, VIEW_BYTES } from '../../sync/token.js';
import { MeasurementsQuery } from '../measurementsQuery.js';
import { arrowContent, VARY_HEADER } from '../openapi/components.js';
import { dataPart, fileNameHeader, listedTubeMissing } from '../openapi/dataPart.js';
import type { Tag } from '../openapi/pathItem.js';
import { MAX_LISTED_TUBES } from '../tubesInView.js';
import { NetworkQuery } from './query.js';
import { changesGone, TOKEN_NOT_ISSUED } from './refusals.js';
import { FILE_NAME_STEM, NETWORK_URL, SYNC_TOKEN_HEADER } from './route.js';

const TAG: Tag = {
  name: 'Networks',
  description: 'The measurements of many tubes, or of every tube a key may read, in one response.',
};

const EXAMPLE_QUERY = { from: '2024-03-01T01:00:00+01:00', to: '2024-03-01T02:00:00+01:00' };
const { from: exampleFrom, to: exampleTo } = MeasurementsQuery.parse(EXAMPLE_QUERY);
const from = formatInstant(exampleFrom);
const to = formatInstant(exampleTo);
/** A token as the service writes one, of a made-up snapshot, view, place and secret. */
const EXAMPLE_SYNC_TOKEN = issueSyncToken(
  {
    xmin: 48_213n,
    xmax: 48_216n,
    xip: [48_214n],
    view: Buffer.alloc(VIEW_BYTES, 7),
    place: { system: 7_312_415_190_288_741_234n, timeline: 1, begin: 0n, lsn: 0x3d0507e8n },
  },
  'example',
  Buffer.alloc(32, 1),
);

const SECOND_TUBE = '5a9e2c1d-7b3f-4e80-a1c2-d3e4f5a6b7c8';

/** Two tubes of the example hour: one with quarter-hourly measurements, one without any. */
const EXAMPLE_TUBES: [SeriesHead, MeasurementValues[]][] = [
  [
    { tubeIdentifier: EXAMPLE_TUBE_IDENTIFIER, from, to, unit: 'm', verticalDatum: 'NAP' },
    [
      { observedAt: '2024-03-01T00:00:00Z', value: -1.23 },
      { observedAt: '2024-03-01T00:15:00Z', value: -1.24 },
      { observedAt: '2024-03-01T00:30:00Z', value: -1.24 },
      { observedAt: '2024-03-01T00:45:00Z', value: -1.26 },
    ],
  ],
  [{ tubeIdentifier: SECOND_TUBE, from, to, unit: 'cm', verticalDatum: 'TAW' }, []],
];

/** The example network, written by `writer` as the service writes one. */
function written(writer: NetworkWriter): Buffer {
  const heads = EXAMPLE_TUBES.map(([head]) => head);
  const parts = [writer.open({ from, to, syncToken: EXAMPLE_SYNC_TOKEN }, heads)];
  for (const [head, rows] of EXAMPLE_TUBES) {
    parts.push(writer.head(head));
    if (rows.length > 0) parts.push(writer.batch(batchOf(rows), true));
  }
  parts.push(writer.close());
  return Buffer.concat(parts);
}

const example = JSON.parse(written(json.network()).toString());
const EXAMPLE_SUMMARY = 'Two tubes of an hour, one without measurements';
/** The body in each format, every example written as the service writes it. */
const content = {
  'application/json': {
    schema: GroundwaterLevelNetwork,
    examples: { network: { summary: EXAMPLE_SUMMARY, value: example } },
  },
  [csv.mediaType]: {
    schema: z.string().meta({
      description:
        'RFC 4180 with CRLF line ends and a header line: `tubeIdentifier,observedAt,value,unit,verticalDatum`, ' +
        '`tubeIdentifier,observedAt,value,status,unit,verticalDatum` with `include=status`, ' +
        'or `tubeIdentifier,observedAt,value,min,max,count,unit,verticalDatum` with `aggregate`; one line per ' +
        'measurement (or bucket), tube by tube in discovery order, each tube in time order. Written as the ' +
        "series' CSV. Only the header line when nothing is selected. A whole file ends in CRLF.",
    }),
    example: written(csv.network()).toString(),
  },
  ...arrowContent(
    "An Apache Arrow IPC stream: the series' columns with `tubeIdentifier` first and `unit` and " +
      '`verticalDatum` last, none nullable; those three dictionary-encoded (int32 indices into utf8), ' +
      'each dictionary sent once, whole, before the first record batch. With `include=status`, `status` ' +
      'right after `value`, dictionary-encoded with int8 indices (its dictionary `approved`, ' +
      '`provisional`, `rejected`, and in a delta `removed`, also sent whole before the first batch). ' +
      "The schema's custom metadata " +
      'holds `from`, `to`, `aggregate` when given, and `syncToken`. Rows tube by tube in discovery ' +
      'order, each tube in time order; nothing selected gives the schema, the dictionaries and the ' +
      'end-of-stream marker. A cut-off stream lacks the marker, and readers refuse it.',
    { network: { summary: EXAMPLE_SUMMARY, bytes: written(arrow.network()) } },
  ),
};

export const networkDocumentPart = dataPart({
  url: NETWORK_URL,
  tag: TAG,
  operationId: 'getNetworkMeasurements',
  summary: 'Level measurements of many tubes over an interval',
  description:
    'The series of the listed tubes, or of every tube the key may read, in [from, to), read from one ' +
    'snapshot and streamed in one response, tubes in discovery order and each in time order. Each ' +
    'element of `series` is exactly what the series endpoint gives for that tube. The request costs ' +
    'one token and holds one concurrency slot while it streams. The ETag is weak: each response ' +
    'carries the sync token of its own snapshot, so equal tags mean equal measurements, not equal bytes.',
  query: NetworkQuery,
  ok: {
    description:
      'The series of the selected tubes, in discovery order. As CSV (`format=csv`, or `Accept: text/csv`) ' +
      'or as an Arrow IPC stream (`format=arrow`, or `Accept: application/vnd.apache.arrow.stream`) when ' +
      'asked for, by the weights of Accept (a tie: JSON, then CSV, then Arrow).',
    headers: {
      [SYNC_TOKEN_HEADER]: {
        description:
          'The token of the snapshot this response was read from (the body holds it too): send it as ' +
          '`changedSince` to get only what was written since.',
        required: true,
        schema: jsonSchemaOf(z.string().meta({ examples: [EXAMPLE_SYNC_TOKEN] })),
      },
      Vary: VARY_HEADER,
      'Content-Disposition': fileNameHeader(
        'CSV and Arrow: a file name `groundwater-measurements_<from>_<to>.csv` (`.arrows` for Arrow) with ' +
          'the interval in compact UTC form.',
        attachment(FILE_NAME_STEM, from, to, 'csv'),
      ),
    },
    content,
  },
  problems: {
    '400': {
      description:
        'A query parameter is missing, repeated or malformed, the interval is not valid, `tubes` holds an ' +
        `empty item, a duplicate or more than ${MAX_LISTED_TUBES} identifiers, or \`changedSince\` is not a token ` +
        'this service issued to this key. `errors` names each parameter to change and why.',
      problem: invalidParameter('changedSince', TOKEN_NOT_ISSUED),
    },
    '404': listedTubeMissing(SECOND_TUBE),
    '410': {
      description:
        'The `changedSince` token is one this service issued, but what changed since cannot be told as ' +
        'measurements: what the key may read changed (a grant, a revocation, a change of a tube or well it ' +
        'reads), or the token is older than the history kept. Sync again without `changedSince`.',
      problem: changesGone(),
    },
  },
  schemas: { GroundwaterLevelNetwork },
});

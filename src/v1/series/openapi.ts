/**
 * The measurements endpoint's part of the OpenAPI document: its operation, with the parameters of the
 * query schema the route validates with, its own problem responses, and the schemas of its body.
 */

import { z } from 'zod';
import type { ZodOpenApiOverrideMetaContext } from 'zod-openapi';
import { type Aggregate, MAX_INTERVAL_DAYS } from '../../contract.js';
import { formatInstant } from '../../domain/datetime.js';
import { batchOf, type MeasurementValues } from '../../engine/batch.js';
import {
  EXAMPLE_TUBE_IDENTIFIER,
  GroundwaterLevelSeries,
  Measurement,
  STATUSES,
  TubeIdentifier,
} from '../../engine/schemas.js';
import { arrow } from '../../engine/write/arrow.js';
import { csv } from '../../engine/write/csv.js';
import { json } from '../../engine/write/json.js';
import type { SeriesWriter } from '../../engine/write/writer.js';
import { attachment } from '../../http/attachment.js';
import { refusalOf, tubeNotFound } from '../../http/problems/problems.js';
import { MeasurementsQuery } from '../measurementsQuery.js';
import { arrowContent, VARY_HEADER } from '../openapi/components.js';
import { dataPart, fileNameHeader } from '../openapi/dataPart.js';
import type { Tag } from '../openapi/pathItem.js';
import { MEASUREMENTS_URL } from './route.js';

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

const TAG: Tag = {
  name: 'Measurements',
  description: 'Groundwater level series: the measurements of one tube over an interval.',
};

/** The interval of the examples, as a client might send it: with an offset, normalised in the answer. */
const EXAMPLE_QUERY = { from: '2024-03-01T01:00:00+01:00', to: '2024-03-01T02:00:00+01:00' };

const { from: exampleFrom, to: exampleTo } = MeasurementsQuery.parse(EXAMPLE_QUERY);
const EXAMPLE_HEAD = {
  tubeIdentifier: EXAMPLE_TUBE_IDENTIFIER,
  from: formatInstant(exampleFrom),
  to: formatInstant(exampleTo),
  unit: 'm',
  verticalDatum: 'NAP',
};

/** A series of the example interval, written by `writer` as the service writes one. */
function written(writer: SeriesWriter, rows: MeasurementValues[], aggregate?: Aggregate) {
  return Buffer.concat([
    writer.head({ ...EXAMPLE_HEAD, ...(aggregate && { aggregate }) }),
    writer.batch(batchOf(rows), true),
    writer.close(),
  ]);
}

const writtenExample = (rows: MeasurementValues[], aggregate?: Aggregate, writer = json.series()) =>
  JSON.parse(written(writer, rows, aggregate).toString());

/** Writers of each measurement's status (`include=status`), as the route makes them. */
const WITH_STATUS = { statuses: STATUSES };

/** An hour of quarter-hourly measurements. */
const EXAMPLE_ROWS: MeasurementValues[] = [
  { observedAt: '2024-03-01T00:00:00Z', value: -1.23 },
  { observedAt: '2024-03-01T00:15:00Z', value: -1.24 },
  { observedAt: '2024-03-01T00:30:00Z', value: -1.24 },
  { observedAt: '2024-03-01T00:45:00Z', value: -1.26 },
];

/** The same hour with `include=status`: two checked, one not yet, one found wrong. */
const EXAMPLE_STATUS_ROWS: MeasurementValues[] = EXAMPLE_ROWS.map((row, i) => ({
  ...row,
  status: (['approved', 'approved', 'provisional', 'rejected'] as const)[i],
}));

/** The same hour with `aggregate=PT1H`: one bucket, its mean as PostgreSQL's avg() writes it. */
const EXAMPLE_BUCKETS: MeasurementValues[] = [
  { observedAt: '2024-03-01T00:00:00Z', value: -1.2425, min: -1.26, max: -1.23, count: 4 },
];

/** The body in each format, every example written as the service writes it. */
const content = {
  'application/json': {
    schema: GroundwaterLevelSeries,
    examples: {
      measurements: { summary: 'Every measurement', value: writtenExample(EXAMPLE_ROWS) },
      aggregated: {
        summary: 'Aggregated (`aggregate=PT1H`)',
        value: writtenExample(EXAMPLE_BUCKETS, 'PT1H'),
      },
      withStatus: {
        summary: 'With each status (`include=status`)',
        value: writtenExample(EXAMPLE_STATUS_ROWS, undefined, json.series(WITH_STATUS)),
      },
    },
  },
  [csv.mediaType]: {
    schema: z.string().meta({
      description:
        'RFC 4180 with CRLF line ends and a header line: `observedAt,value,unit,verticalDatum`, ' +
        '`observedAt,value,status,unit,verticalDatum` with `include=status`, or ' +
        '`observedAt,value,min,max,count,unit,verticalDatum` with `aggregate`; one line per measurement ' +
        '(or bucket) in time order, each with the unit and vertical datum of the tube (quoted when they ' +
        'hold a comma, quote or line break). Times and numbers are written as in the JSON. An empty ' +
        'interval gives the header line only. A whole file ends in CRLF; a cut-off one does not.',
    }),
    examples: {
      measurements: { summary: 'Every measurement', value: written(csv.series(), EXAMPLE_ROWS).toString() },
      aggregated: {
        summary: 'Aggregated (`aggregate=PT1H`)',
        value: written(csv.series(), EXAMPLE_BUCKETS, 'PT1H').toString(),
      },
      withStatus: {
        summary: 'With each status (`include=status`)',
        value: written(csv.series(WITH_STATUS), EXAMPLE_STATUS_ROWS).toString(),
      },
    },
  },
  ...arrowContent(
    'An Apache Arrow IPC stream (`format=arrow`, or `Accept: application/vnd.apache.arrow.stream` ' +
      'weighing most): the schema, record batches and the end-of-stream marker; metadata V5, no ' +
      'buffer compression. Columns, none nullable: `observedAt` timestamp[us, UTC], `value` float64, ' +
      'with `include=status` `status` (utf8, dictionary-encoded with int8 indices, the dictionary sent ' +
      'whole before the first record batch), and with `aggregate` `min`, `max` (float64) and `count` ' +
      "(int64). The schema's custom metadata " +
      'holds the head: `tubeIdentifier`, `from`, `to`, `aggregate` when given, `unit`, ' +
      '`verticalDatum`. An empty interval gives the schema and the end-of-stream marker. A cut-off ' +
      'stream lacks the marker, and readers refuse it.',
    {
      measurements: { summary: 'Every measurement', bytes: written(arrow.series(), EXAMPLE_ROWS) },
      aggregated: {
        summary: 'Aggregated (`aggregate=PT1H`)',
        bytes: written(arrow.series(), EXAMPLE_BUCKETS, 'PT1H'),
      },
      withStatus: {
        summary: 'With each status (`include=status`)',
        bytes: written(arrow.series(WITH_STATUS), EXAMPLE_STATUS_ROWS),
      },
    },
  ),
};

/** The 400 this endpoint answers when `to` is not later than `from`. */
function refusedExample() {
  const refusal = refusalOf(MeasurementsQuery, { from: EXAMPLE_QUERY.to, to: EXAMPLE_QUERY.from });
  if (!refusal) throw new Error('the example of a refused query was accepted');
  return refusal;
}

export const seriesDocumentPart = dataPart({
  url: MEASUREMENTS_URL,
  tag: TAG,
  operationId: 'getMeasurements',
  summary: 'Level measurements of one tube over an interval',
  description:
    'The series of one tube in [from, to), oldest first, with the unit and vertical datum of the ' +
    'tube. Streamed: the series fields come first, then the measurements. With `aggregate`, the ' +
    'database aggregates the interval into buckets (mean, min, max, count) and those are listed ' +
    'instead.',
  path: pathParameters,
  query: MeasurementsQuery,
  ok: {
    description:
      'The series; `measurements` is `[]` when the interval holds none. As CSV (`format=csv`, or ' +
      '`Accept: text/csv`) or as Arrow (`format=arrow`, or `Accept: application/vnd.apache.arrow.stream`) ' +
      'when asked for: by Accept, the type it weighs most, JSON before CSV before Arrow among equals.',
    headers: {
      Vary: VARY_HEADER,
      'Content-Disposition': fileNameHeader(
        'CSV and Arrow: a file name `<tubeIdentifier>_<from>_<to>.csv` (`.arrows` for Arrow) with the ' +
          'interval in compact UTC form (`20240101T000000Z`, fractions of a second kept).',
        attachment(EXAMPLE_HEAD.tubeIdentifier, EXAMPLE_HEAD.from, EXAMPLE_HEAD.to, 'csv'),
      ),
    },
    content,
  },
  problems: {
    '400': {
      id: 'BadRequest',
      description:
        'A query parameter is missing, repeated or malformed, `to` is not later than `from`, or the ' +
        `interval is longer than ${MAX_INTERVAL_DAYS} days. \`errors\` names each parameter to change and ` +
        'why: a missing or malformed one itself; `to` when it is not later than `from` or the interval is too long.',
      problem: refusedExample(),
    },
    '404': {
      id: 'NotFound',
      description:
        'No tube with this identifier that this key may read. Unknown, malformed and hidden ' +
        'identifiers give the same answer; a stored identifier that now gives 404 is unavailable to ' +
        'this client.',
      problem: tubeNotFound(),
    },
  },
  schemas: { Measurement, GroundwaterLevelSeries },
});

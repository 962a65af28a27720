/** The measurements endpoint's one response shape: the series of a tube. */
import { z } from 'zod';
import { FRACTION_DIGITS } from '../domain/datetime.js';
import { AGGREGATES, count, MOST_MINUTELY_MEASUREMENTS } from '../v1/series/query.js';
import { TubeIdentifier } from '../v1/wells/schemas.js';

const UTC_DATE_TIME = {
  type: 'string',
  format: 'date-time',
  description: `RFC 3339 in UTC, ending in \`Z\`; fractional seconds (up to ${FRACTION_DIGITS} digits) only when not zero.`,
} as const;

const ONLY_AGGREGATED = 'Present only in an aggregated series (`aggregate`).';

/** A level of a bucket, written as `value` is. */
const bucketLevel = (which: string) =>
  z
    .number()
    .optional()
    .meta({ description: `The ${which} measurement of the bucket. ${ONLY_AGGREGATED}`, examples: [-1.23] });

// Strict, as wells/schemas.ts's objects are, for the reason given there. The fields of an aggregated
// series are optional: the serializer leaves out what a row lacks, so a raw series is written as before.
export const Measurement = z
  .strictObject({
    observedAt: z.string().meta({
      ...UTC_DATE_TIME,
      description:
        'Moment of observation; in an aggregated series, the start of the bucket. ' +
        UTC_DATE_TIME.description,
    }),
    value: z.number().meta({
      description:
        'Groundwater level in the unit of the series. The decimal as imported (up to 15 significant ' +
        'digits), written as a JSON number. In an aggregated series, the arithmetic mean of the ' +
        "bucket's measurements, written as the shortest decimal that reads back as the same double.",
      examples: [-1.23],
    }),
    min: bucketLevel('lowest'),
    max: bucketLevel('highest'),
    count: z
      .int()
      .min(1)
      .optional()
      .meta({ description: `How many measurements the bucket holds. ${ONLY_AGGREGATED}`, examples: [96] }),
  })
  .meta({
    description:
      'One groundwater level measurement of the tube, or in an aggregated series one bucket of them.',
  });

export type Measurement = z.infer<typeof Measurement>;

const seriesFields = {
  tubeIdentifier: TubeIdentifier,
  from: z.string().meta({
    ...UTC_DATE_TIME,
    description: `Start of the interval (inclusive), the requested \`from\` normalised to UTC.`,
  }),
  to: z.string().meta({
    ...UTC_DATE_TIME,
    description: 'End of the interval (exclusive), the requested `to` normalised to UTC.',
  }),
  unit: z.string().meta({
    description: 'Unit of the values, set per tube by the operator (default `m`).',
    examples: ['m'],
  }),
  verticalDatum: z.string().meta({
    description: 'Vertical reference of the values, set per tube by the operator (default `NAP`).',
    examples: ['NAP'],
  }),
  aggregate: z
    .enum(AGGREGATES)
    .optional()
    .meta({ description: 'The requested `aggregate`. Present only in an aggregated series.' }),
};

// Strict: the network's body refers to it (see wells/schemas.ts).
export const GroundwaterLevelSeries = z
  .strictObject({
    ...seriesFields,
    measurements: z.array(Measurement).meta({
      description:
        'Every measurement of the interval, oldest first; `[]` when there is none. No pagination: the ' +
        `whole interval (up to ${count(MOST_MINUTELY_MEASUREMENTS)} measurements for a year of 1-minute data) comes in this ` +
        'one response, streamed. With `aggregate`, one element per bucket that holds a measurement, ' +
        'oldest first.',
    }),
  })
  .meta({
    description: 'The measurements of one tube over an interval, with their unit and vertical datum.',
  });

/** Everything of a series before its measurements: written first, before the rows are read. */
export const SeriesHead = z.object(seriesFields);
export type SeriesHead = z.infer<typeof SeriesHead>;

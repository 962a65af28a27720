/** The shapes of what the measurements endpoints write: a tube identifier, a series, a network. */
import { z } from 'zod';
import { AGGREGATES, count, MOST_MINUTELY_MEASUREMENTS } from '../contract.js';
import { FRACTION_DIGITS } from '../domain/datetime.js';
import { STATUSES } from '../domain/status.js';

/** The tube identifier of the examples. */
export const EXAMPLE_TUBE_IDENTIFIER = '2f1c7a4e-9b1d-4c3e-8f55-0a6d3c9e1b42';

/** A tube identifier as the API returns it: a UUID in lower case. */
export const TubeIdentifier = z.guid().meta({
  description:
    'Stable identifier of a tube (a UUID). The API returns it in lower case; in paths it is matched ' +
    'case-insensitively.',
  examples: [EXAMPLE_TUBE_IDENTIFIER],
});

/** The lower-case form of a well-formed identifier; undefined for a malformed one. */
export function canonicalTubeIdentifier(text: string): string | undefined {
  return TubeIdentifier.safeParse(text).success ? text.toLowerCase() : undefined;
}

// A measurement's status and its code (src/domain/status.ts: the importers write it too).
export { DEFAULT_STATUS, STATUSES, type Status, statusCode } from '../domain/status.js';
/** What a delta writes, the code after the statuses', for a measurement that left the client's view. */
export const REMOVED = 'removed';
/** The names a delta's status column may hold, by code: the statuses, then REMOVED. */
export const DELTA_STATUSES = [...STATUSES, REMOVED] as const;

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

// Strict, as src/v1/wells/schemas.ts's objects are, for the reason given there. The fields of an aggregated
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
    status: z
      .enum(DELTA_STATUSES)
      .optional()
      .meta({
        description:
          'How far the value can be trusted: `approved` (checked and accepted), `provisional` (not yet ' +
          'checked) or `rejected` (checked and found wrong, kept for the record); in a delta (`changedSince`) ' +
          'also `removed`, a measurement to delete from the copy. Present only with `include=status`.',
        examples: ['approved'],
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

// Strict: the network's body refers to it (see src/v1/wells/schemas.ts).
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

/** The network's JSON body: a head of its own, then the series of the endpoint for one tube. */
/** The head's fields, taken from the series head so that they are described (and written) alike. */
const { from, to, aggregate } = SeriesHead.shape;

export const NetworkHead = z.object({
  from,
  to,
  aggregate,
  syncToken: z.string().meta({
    description:
      'The token of the snapshot this response was read from, as in the `Sync-Token` header: send it ' +
      'as `changedSince` to get only what was written since. Opaque, URL-safe, at most 200 characters.',
  }),
});
export type NetworkHead = z.infer<typeof NetworkHead>;

export const GroundwaterLevelNetwork = NetworkHead.extend({
  series: z.array(GroundwaterLevelSeries).meta({
    description:
      'Each element exactly the series the series endpoint gives for that tube with the same `from`, `to` ' +
      'and `aggregate`, in discovery order (wells by name, tubes by number, both natural). Every selected ' +
      'tube is listed, with `"measurements": []` when it has none, except with `changedSince`: then only ' +
      'tubes with a changed measurement are.',
  }),
}).meta({ description: 'The measurements of many tubes over one interval, read from one snapshot.' });

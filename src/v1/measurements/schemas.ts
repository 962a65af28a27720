/** The measurements endpoint's one response shape: the series of a tube. */
import { z } from 'zod';
import { FRACTION_DIGITS } from '../../domain/datetime.js';
import { TubeIdentifier } from '../wells/schemas.js';
import { count, MOST_MINUTELY_MEASUREMENTS } from './query.js';

const UTC_DATE_TIME = {
  type: 'string',
  format: 'date-time',
  description: `RFC 3339 in UTC, ending in \`Z\`; fractional seconds (up to ${FRACTION_DIGITS} digits) only when not zero.`,
} as const;

// Strict, as wells/schemas.ts's objects are, for the reason given there.
export const Measurement = z
  .strictObject({
    observedAt: z
      .string()
      .meta({ ...UTC_DATE_TIME, description: `Moment of observation. ${UTC_DATE_TIME.description}` }),
    value: z.number().meta({
      description:
        'Groundwater level in the unit of the series. The decimal as imported (up to 15 significant ' +
        'digits), written as a JSON number.',
      examples: [-1.23],
    }),
  })
  .meta({ description: 'One groundwater level measurement of the tube.' });

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
};

export const GroundwaterLevelSeries = z
  .object({
    ...seriesFields,
    measurements: z.array(Measurement).meta({
      description:
        'Every measurement of the interval, oldest first; `[]` when there is none. No pagination: the ' +
        `whole interval (up to ${count(MOST_MINUTELY_MEASUREMENTS)} measurements for a year of 1-minute data) comes in this ` +
        'one response, streamed.',
    }),
  })
  .meta({
    description: 'The measurements of one tube over an interval, with their unit and vertical datum.',
  });

/** Everything of a series before its measurements: written first, before the rows are read. */
export const SeriesHead = z.object(seriesFields);
export type SeriesHead = z.infer<typeof SeriesHead>;

/** The measurements endpoint: its parameters and its one response shape. */
import { z } from 'zod';
import { EXAMPLE, type Instant, microsBetween, parseDateTime } from '../../domain/datetime.js';
import { components } from '../openapi/components.js';
import { TubeIdentifier } from '../wells/schemas.js';

/** The longest interval a request may ask for: 366 days, exactly (decisions.md). */
export const MAX_INTERVAL_MICROS = 366 * 86_400 * 1_000_000;

const UTC_DATE_TIME = {
  type: 'string',
  format: 'date-time',
  description: 'RFC 3339 in UTC, ending in `Z`; fractional seconds (up to 6 digits) only when not zero.',
} as const;

/**
 * `from` or `to` as a client sends it: one RFC 3339 date-time with an offset. The query parser hands
 * over `undefined` for a missing parameter and an array for a repeated one; each gets its own message.
 */
function dateTimeParameter(description: string) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `is required: an RFC 3339 date-time with offset, such as ${EXAMPLE}`
          : Array.isArray(issue.input)
            ? 'was given more than once: give it exactly once'
            : 'must be an RFC 3339 date-time',
    })
    .transform((text, context): Instant => {
      const parsed = parseDateTime(text);
      if (parsed.ok) return parsed.instant;
      context.addIssue({ code: 'custom', message: parsed.reason, input: text });
      return z.NEVER;
    })
    .meta({
      description:
        `${description} RFC 3339 date-time (\`YYYY-MM-DDTHH:MM:SS\`, an optional fraction of 1 to 6 ` +
        'digits, then `Z` or `±HH:MM`); the offset is required and any offset is accepted. Impossible ' +
        "dates, date-only values and values without offset are 400. URL-encode it: `:` as `%3A` and a '+' " +
        'offset as `%2B` (a `+` left unencoded arrives as a space and is 400 with a message saying so).',
      format: 'date-time',
      examples: ['2024-01-01T00:00:00Z', '2024-01-01T01:00:00+01:00'],
    });
}

export const SeriesQuery = z
  .object({
    from: dateTimeParameter('Start of the interval, inclusive.'),
    to: dateTimeParameter(
      'End of the interval, exclusive. Must be later than `from` and at most 366 days ' +
        '(31,622,400 seconds) after it; one microsecond more is 400.',
    ),
  })
  .superRefine(({ from, to }, context) => {
    const length = microsBetween(from, to);
    if (length <= 0) {
      context.addIssue({ code: 'custom', path: ['to'], message: 'must be later than from' });
    } else if (length > MAX_INTERVAL_MICROS) {
      context.addIssue({
        code: 'custom',
        path: ['to'],
        message: 'is more than 366 days after from: ask for at most 366 days (31,622,400 seconds) at once',
      });
    }
  });

export type SeriesQuery = z.output<typeof SeriesQuery>;

export const Measurement = z
  .object({
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
  .register(components, { id: 'Measurement' });

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
        'whole interval (up to 527,040 measurements for a year of 1-minute data) comes in this one ' +
        'response, streamed.',
    }),
  })
  .register(components, { id: 'GroundwaterLevelSeries' });

/** Everything of a series before its measurements: written first, before the rows are read. */
export const SeriesHead = z.object(seriesFields);
export type SeriesHead = z.infer<typeof SeriesHead>;

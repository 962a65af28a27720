/**
 * The query of every measurements endpoint (a series, a network): the interval, its aggregation and
 * the format, as a client sends them. A route validates with this schema (extended by its own
 * parameters) and the OpenAPI document lists its parameters from it (required unless optional), so a
 * parameter added here is validated, named in a 400's `errors` and documented, with no edit elsewhere.
 */
import { z } from 'zod';
import {
  AGGREGATES,
  type Aggregate,
  MAX_INTERVAL_DAYS,
  MAX_INTERVAL_MICROS,
  MAX_INTERVAL_TEXT,
} from '../contract.js';
import { DATE_TIME_FORM, EXAMPLE, formatInstant, microsBetween, parseDateTime } from '../domain/datetime.js';
import type { Interval, StatusRequest } from '../engine/read/selects.js';
import { DELTA_STATUSES, STATUSES, statusCode } from '../engine/schemas.js';
import { FORMAT_NAMES, type WriterOptions } from '../engine/write/writer.js';

/** The message of a parameter given more than once. */
export const GIVEN_TWICE = 'was given more than once: give it exactly once';

/**
 * A parameter's transform by its parser: the value `parse` reads under `key`, or a 400 issue with the
 * parser's reason.
 */
export function parsedBy<Read extends { ok: true }, K extends keyof Read>(
  parse: (text: string) => Read | { ok: false; reason: string },
  key: K,
) {
  return (text: string, context: z.RefinementCtx<string>): Read[K] => {
    const parsed = parse(text);
    if (parsed.ok) return parsed[key];
    context.addIssue({ code: 'custom', message: parsed.reason, input: text });
    return z.NEVER;
  };
}

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
            ? GIVEN_TWICE
            : 'must be an RFC 3339 date-time',
    })
    .transform(parsedBy(parseDateTime, 'instant'))
    .meta({
      // On the parameter, where OpenAPI readers look (zod-openapi), not repeated in its schema.
      param: {
        description:
          `${description} RFC 3339 date-time (${DATE_TIME_FORM}); the offset is required and any ` +
          'offset is accepted. Impossible dates, date-only values and values without offset are 400. ' +
          "URL-encode it: `:` as `%3A` and a '+' offset as `%2B` (a `+` left unencoded arrives as a " +
          'space and is 400 with a message saying so).',
      },
      format: 'date-time',
      examples: ['2024-01-01T00:00:00Z', '2024-01-01T01:00:00+01:00'],
    });
}

/**
 * The interval is checked once `from` and `to` were read, whatever else failed: zod would skip the
 * check at any issue, and a bad `format` or `aggregate` would hide a too-long interval.
 */
const INTERVAL_READ = {
  when: ({ issues }: { issues: readonly { path?: readonly PropertyKey[] }[] }) =>
    issues.every(({ path }) => path?.[0] !== 'from' && path?.[0] !== 'to'),
};

const aggregateParameter = z
  .enum(AGGREGATES, {
    error: (issue) =>
      Array.isArray(issue.input) ? GIVEN_TWICE : `must be one of ${AGGREGATES.join(', ')} (upper case)`,
  })
  .optional()
  .meta({
    param: {
      description:
        'Aggregate the interval into buckets of this length instead of listing every measurement: ' +
        'ISO 8601 durations as fixed steps (`P1D` is 86,400 seconds). Buckets start at `from` (its UTC ' +
        'instant) and the last is cut off at `to`, so a `from` at local midnight gives local days. Each ' +
        'bucket that holds a measurement gives one element with the mean as `value` and `min`, `max` ' +
        'and `count`; empty buckets are left out. Without it, every measurement is listed.',
    },
    examples: ['P1D'],
  });

/**
 * A comma-separated list parameter, given once: its items as sent, or the first problem of them (an
 * empty item, one not in `known`, a duplicate). Its message names every item it knows.
 */
function listParameter<const Known extends string>(known: readonly Known[], what: string) {
  const names = known.map((name) => `\`${name}\``);
  const knownText = names.join(', ');
  const oneOfKnown = names.length === 1 ? names[0] : `one of ${knownText}`;
  return z
    .string({
      error: (issue) =>
        Array.isArray(issue.input) ? GIVEN_TWICE : `must be a comma-separated list of ${what}: ${knownText}`,
    })
    .transform((text, context): Known[] => {
      const items = text.split(',');
      const seen = new Set<string>();
      for (const item of items) {
        const problem =
          item === ''
            ? 'holds an empty item: separate the items by single commas'
            : !(known as readonly string[]).includes(item)
              ? `lists ${item}, which is not ${oneOfKnown} (lower case)`
              : seen.has(item)
                ? `lists ${item} more than once`
                : undefined;
        if (problem !== undefined) {
          context.addIssue({ code: 'custom', message: problem, input: text });
          return z.NEVER;
        }
        seen.add(item);
      }
      return items as Known[];
    });
}

/** `status`: only measurements of the listed statuses; without it, every status. */
export const statusParameter = listParameter(STATUSES, 'statuses')
  .optional()
  .meta({
    param: {
      description:
        'Only measurements with one of these statuses, comma-separated: `approved` (checked and ' +
        'accepted), `provisional` (not yet checked) or `rejected` (checked and found wrong, kept for the ' +
        'record). Without it, every status. With `aggregate`, the buckets summarise only the ' +
        'measurements that pass, and a bucket with none is left out. An empty item, an unknown status, ' +
        'a duplicate or the parameter twice is 400.',
    },
    examples: ['approved', 'approved,provisional'],
  });

/** What `include` may add to each measurement. */
export const INCLUDABLE = ['status'] as const;

/** `include`: fields added to each measurement; `status` is the only one. */
export const includeParameter = listParameter(INCLUDABLE, 'fields')
  .optional()
  .meta({
    param: {
      description:
        'Fields added to each measurement, comma-separated; `status` is the only one: each ' +
        'measurement then carries its status right after `value` (a JSON field, a CSV column, an Arrow ' +
        'column dictionary-encoded as int8 indices into utf8). Not with `aggregate` (a bucket has no ' +
        'single status). Anything else, or the parameter twice, is 400.',
    },
    examples: ['status'],
  });

/** The message of `include` given with `aggregate`. */
export const INCLUDE_WITH_AGGREGATE = 'cannot be given with aggregate: a bucket has no single status';

/**
 * `status` and `include`, as every measurements endpoint takes them (the series, the network,
 * `latest`): extend it with the endpoint's own parameters, and read it with statusRequestOf. An
 * endpoint that aggregates also refuses `include` with `aggregate` (refuseIncludeWithAggregate).
 */
export const StatusQuery = z.object({ status: statusParameter, include: includeParameter });
export type StatusQuery = z.output<typeof StatusQuery>;

/** The 400 of `include` with `aggregate`, as a superRefine of a query that has both. */
export function refuseIncludeWithAggregate(
  { aggregate, include }: { aggregate?: unknown; include?: readonly string[] | undefined },
  context: z.RefinementCtx,
): void {
  if (aggregate !== undefined && include !== undefined) {
    context.addIssue({ code: 'custom', path: ['include'], message: INCLUDE_WITH_AGGREGATE });
  }
}

/**
 * What a query's `status` and `include` ask of the engine: the codes of the listed statuses in
 * ascending order, none when every status is listed (a filter that passes every row is no filter), and
 * whether each measurement's status is written.
 */
export function statusRequestOf({ status, include }: StatusQuery): StatusRequest {
  const codes = status?.map(statusCode).sort((a, b) => a - b);
  return {
    statuses: codes === undefined || codes.length === STATUSES.length ? undefined : codes,
    withStatus: include?.includes('status') ?? false,
  };
}

/** `must be json, csv or arrow`: the formats in the order a tie is broken. */
export const FORMAT_MESSAGE = `must be ${FORMAT_NAMES.slice(0, -1).join(', ')} or ${FORMAT_NAMES.at(-1)}`;

export const MeasurementsQuery = z
  .object({
    from: dateTimeParameter('Start of the interval, inclusive.'),
    to: dateTimeParameter(
      `End of the interval, exclusive. Must be later than \`from\` and at most ${MAX_INTERVAL_TEXT} ` +
        'after it; one microsecond more is 400.',
    ),
    aggregate: aggregateParameter,
    format: z
      .enum(FORMAT_NAMES, {
        error: (issue) => (Array.isArray(issue.input) ? GIVEN_TWICE : FORMAT_MESSAGE),
      })
      .optional()
      .meta({
        param: {
          description:
            'The format of the series: `json` (application/json), `csv` (text/csv) or `arrow` ' +
            '(application/vnd.apache.arrow.stream, an Arrow IPC stream). When given, it decides over ' +
            'the Accept header; without it, Accept decides: the type with the highest q, JSON before ' +
            'CSV before Arrow among equals, and JSON when none is acceptable. For tools that cannot ' +
            'set headers.',
        },
      }),
    ...StatusQuery.shape,
  })
  .superRefine(refuseIncludeWithAggregate, {
    when: ({ issues }) => issues.every(({ path }) => path?.[0] !== 'aggregate' && path?.[0] !== 'include'),
  })
  .superRefine(({ from, to }, context) => {
    const length = microsBetween(from, to);
    if (length <= 0) {
      context.addIssue({ code: 'custom', path: ['to'], message: 'must be later than from' });
    } else if (length > MAX_INTERVAL_MICROS) {
      context.addIssue({
        code: 'custom',
        path: ['to'],
        message: `is more than ${MAX_INTERVAL_DAYS} days after from: ask for at most ${MAX_INTERVAL_TEXT} at once`,
      });
    }
  }, INTERVAL_READ);

export type MeasurementsQuery = z.output<typeof MeasurementsQuery>;

/**
 * The interval a query asks for, as the engine reads it: `from` and `to` in RFC 3339 UTC `Z` form,
 * and what its `status` and `include` ask (statusRequestOf).
 */
export const intervalOf = (
  query: MeasurementsQuery,
): Interval & StatusRequest & { aggregate: Aggregate | undefined } => ({
  from: formatInstant(query.from),
  to: formatInstant(query.to),
  aggregate: query.aggregate,
  ...statusRequestOf(query),
});

/**
 * What `status` and `include` add to a document's entity tag: nothing when neither was given, so the
 * tags of every other request stay as they were; the filter's codes (in order, so that the order a
 * client lists them in does not matter) and `status` when it is written.
 */
export const statusTagParts = ({ statuses, withStatus }: StatusRequest): string[] => [
  ...(statuses ? [`status:${statuses.join(',')}`] : []),
  ...(withStatus ? ['include:status'] : []),
];

/**
 * How the writer of a query's document is made: with the statuses' names when it writes them, and
 * `removed` among them for a delta (a sync delta's removals).
 */
export const writerOptionsOf = ({ withStatus }: StatusRequest, { delta = false } = {}): WriterOptions =>
  withStatus ? { statuses: delta ? DELTA_STATUSES : STATUSES } : {};

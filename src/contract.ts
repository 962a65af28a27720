/** The facts of version 1 of the contract that code outside /v1 also states. */

/** Where version 1 is served. */
export const V1_PREFIX = '/v1';

/** The contract's MAJOR.MINOR.PATCH, sent as `API-Version` on every response and in the OpenAPI `info`. */
export const API_VERSION = '1.4.0';

const SECONDS_PER_DAY = 86_400;

/** The longest interval a request may ask for, in days of 86,400 seconds. */
export const MAX_INTERVAL_DAYS = 366;
export const MAX_INTERVAL_SECONDS = MAX_INTERVAL_DAYS * SECONDS_PER_DAY;
/** The same, exactly: one microsecond more is 400. */
export const MAX_INTERVAL_MICROS = MAX_INTERVAL_SECONDS * 1_000_000;

/** The most measurements a series holds: one a minute over the longest interval. */
export const MOST_MINUTELY_MEASUREMENTS = MAX_INTERVAL_DAYS * 24 * 60;

/** A count as English text writes it: `31,622,400`. */
export const count = (n: number): string => n.toLocaleString('en-US');

/** `366 days (31,622,400 seconds)`: the limit as messages and the document state it. */
export const MAX_INTERVAL_TEXT = `${MAX_INTERVAL_DAYS} days (${count(MAX_INTERVAL_SECONDS)} seconds)`;

/** `366 × 86,400 seconds exactly`: the rule as the document's overview states it. */
export const MAX_INTERVAL_RULE = `${MAX_INTERVAL_DAYS} × ${count(SECONDS_PER_DAY)} seconds exactly`;

/**
 * The bucket lengths `aggregate` offers, in seconds: ISO 8601 durations taken as fixed steps (a day is
 * 86,400 seconds, whatever the calendar or a time zone says).
 */
export const AGGREGATE_SECONDS = { PT15M: 900, PT1H: 3_600, P1D: 86_400, P7D: 604_800 } as const;
export type Aggregate = keyof typeof AGGREGATE_SECONDS;
export const AGGREGATES = Object.keys(AGGREGATE_SECONDS) as [Aggregate, ...Aggregate[]];

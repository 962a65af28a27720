/** The one place that opens PostgreSQL connections, so every pool shares the same session settings. */
import postgres from 'postgres';

export type Sql = postgres.Sql;

export interface ConnectOptions {
  /** Most connections in the pool. */
  max?: number;
  /** Shown in pg_stat_activity, so operators can tell replicas and commands apart. */
  applicationName?: string;
}

/**
 * postgres.js sends every timestamp parameter through `new Date(x).toISOString()`, which cuts
 * microseconds to milliseconds: a `from` of `…00.000123Z` would become `…00.000Z` and move an interval
 * bound. Strings go to the server as they are (it parses RFC 3339 exactly); Dates and numbers as before.
 */
const exactTimestamps = {
  to: 1184,
  from: [1082, 1114, 1184],
  serialize: (x: unknown) => (typeof x === 'string' ? x : new Date(x as Date | number).toISOString()),
  parse: (x: string) => new Date(x),
};

export function connect(url: string, options: ConnectOptions = {}): Sql {
  return postgres(url, {
    types: { date: exactTimestamps },
    max: options.max ?? 10,
    // UTC sessions make timestamptz text output directly convertible to RFC 3339 `Z` form.
    connection: { TimeZone: 'UTC', application_name: options.applicationName ?? 'gwapi' },
    // Server NOTICEs (e.g. "relation already exists, skipping") are not the operator's business.
    onnotice: () => {},
    idle_timeout: 60,
    connect_timeout: 10,
  });
}

/** The one place that opens PostgreSQL connections, so every pool shares the same session settings. */
import postgres from 'postgres';
import { driverUrl } from './postgresUrl.js';

export type Sql = postgres.Sql;
/** What a query needs: the pool or a transaction of it. */
export type Queryable = postgres.ISql;

export interface ConnectOptions {
  /** Most connections in the pool. */
  max?: number;
  /** Shown in pg_stat_activity, so operators can tell replicas and commands apart. */
  applicationName?: string;
  /**
   * Named prepared statements (DATABASE_PREPARE; default true). false: every statement is parsed
   * unnamed, as PgBouncer in transaction mode before 1.21 needs: it hands each transaction any server
   * connection, and a statement prepared on one is unknown on the next. postgres.js applies this to
   * every query of the pool, including those that ask for `prepare: true` themselves.
   */
  prepare?: boolean;
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
  return postgres(driverUrl(url), {
    types: { date: exactTimestamps },
    max: options.max ?? 10,
    prepare: options.prepare ?? true,
    // UTC sessions with ISO DateStyle print timestamptz as `2024-01-01 00:00:00.5+00`, which becomes
    // RFC 3339 `Z` form by slicing, whatever the server's configured defaults.
    connection: {
      TimeZone: 'UTC',
      DateStyle: 'ISO, MDY',
      application_name: options.applicationName ?? 'gwapi',
    },
    // Server NOTICEs (e.g. "relation already exists, skipping") are not the operator's business.
    onnotice: () => {},
    idle_timeout: 60,
    connect_timeout: 10,
  });
}

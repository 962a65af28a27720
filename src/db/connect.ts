/** The one place that opens PostgreSQL connections, so every pool shares the same session settings. */
import postgres from 'postgres';
import { hostUrl, parsePostgresUrl, withoutHostChoice } from './postgresUrl.js';
import { hostLocator } from './targetSession.js';

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

/**
 * Several hosts, or a kind of server asked for: the hosts are chosen by targetSession.ts, not by
 * postgres.js (which would get the URL's first host only, and a socket to the chosen one).
 */
function hostChoice(url: string) {
  const parsed = parsePostgresUrl(url);
  const target = parsed.targetSessionAttrs ?? 'any';
  if (parsed.hosts.length === 1 && target === 'any') return undefined;
  const locator = hostLocator({ hosts: parsed.hosts, probeUrl: (index) => hostUrl(url, index), target });
  return {
    url: hostUrl(url, 0),
    socket: locator.socket,
    padding: { [STARTUP_PADDING]: 'x'.repeat(STARTUP_PADDING_BYTES) },
    // postgres.js waits up to 20 s, growing with each failure, before a closed connection tries again:
    // after a switch-over that would outlast it. The locator already paces its probes.
    backoff: () => RECONNECT_SECONDS,
  };
}

/** How long a pool connection that failed waits before its next attempt, with several hosts. */
const RECONNECT_SECONDS = 0.1;

/**
 * A pool connection of postgres.js 3.4 that closes while a small write waits for its setImmediate
 * keeps that write marked as pending for good: from then on nothing small is ever sent on it (not even
 * the startup message of its next session), and every query it is given fails after connect_timeout,
 * on and on. That happens when the server goes away under load (a switch-over). Only a write of at
 * least 1 KiB is sent at once and clears the mark, so the startup message is padded to that with a
 * custom setting nobody reads: the first session after such a close fails on the stale bytes ahead of
 * it and the next one is whole, within the same query.
 */
const STARTUP_PADDING = 'gwapi.startup_padding';
const STARTUP_PADDING_BYTES = 1024;

export function connect(url: string, options: ConnectOptions = {}): Sql {
  const choice = hostChoice(url);
  // One host and any kind of server: postgres.js connects as it always does.
  return postgres(choice?.url ?? withoutHostChoice(url), {
    ...(choice ? { socket: choice.socket, backoff: choice.backoff } : {}),
    types: { date: exactTimestamps },
    max: options.max ?? 10,
    prepare: options.prepare ?? true,
    // UTC sessions with ISO DateStyle print timestamptz as `2024-01-01 00:00:00.5+00`, which becomes
    // RFC 3339 `Z` form by slicing, whatever the server's configured defaults.
    connection: {
      ...choice?.padding,
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

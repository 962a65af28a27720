/** The one place that opens PostgreSQL connections, so every pool shares the same session settings. */
import postgres from 'postgres';

export type Sql = postgres.Sql;

export interface ConnectOptions {
  /** Most connections in the pool. */
  max?: number;
  /** Shown in pg_stat_activity, so operators can tell replicas and commands apart. */
  applicationName?: string;
}

export function connect(url: string, options: ConnectOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    // UTC sessions make timestamptz text output directly convertible to RFC 3339 `Z` form.
    connection: { TimeZone: 'UTC', application_name: options.applicationName ?? 'gwapi' },
    // Server NOTICEs (e.g. "relation already exists, skipping") are not the operator's business.
    onnotice: () => {},
    idle_timeout: 60,
    connect_timeout: 10,
  });
}

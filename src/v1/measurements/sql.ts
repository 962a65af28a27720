/**
 * The SQL of the measurements endpoint. Times travel as RFC 3339 text both ways (no Date objects), and
 * values as PostgreSQL's text of the double (why: asNumber in src/http/jsonSchema.ts).
 */
import type { Queryable } from '../../db/connect.js';

export interface TubeRow {
  /** Internal id: what grants and measurements refer to. */
  id: number;
  unit: string;
  verticalDatum: string;
  /** What the series' validators derive from (sql/004): a bigint as text, and its time. */
  seriesVersion: string;
  seriesChangedAt: Date;
}

/** A tube by its identifier (canonical lower-case UUID text). */
export async function findTube(sql: Queryable, identifier: string): Promise<TubeRow | undefined> {
  const [tube] = await sql<TubeRow[]>`
    select id, unit, vertical_datum as "verticalDatum", series_version::text as "seriesVersion",
           series_changed_at as "seriesChangedAt"
    from tubes where identifier = ${identifier}::uuid`;
  return tube;
}

export interface MeasurementRow {
  /** RFC 3339 in UTC, as the API returns it: `2024-01-01T00:00:00.5Z`. */
  observedAt: string;
  /** The stored double as PostgreSQL's shortest text (`-1.23`), which the serializer passes on. */
  value: string;
}

/**
 * The measurements of one tube in [from, to), oldest first: the query of the series cursor, also run
 * plainly and under EXPLAIN by the TimescaleDB test. The primary key (tube_id, observed_at) include
 * (value) answers it with an index-only scan, already in order.
 */
export function seriesSelect(sql: Queryable, tubeId: number, from: string, to: string) {
  return sql`
    select replace(replace(observed_at::text, ' ', 'T'), '+00', 'Z') as "observedAt", value::text as value
    from measurements
    where tube_id = ${tubeId} and observed_at >= ${from}::timestamptz and observed_at < ${to}::timestamptz
    order by observed_at`;
}

/**
 * FETCHes kept in flight on the connection. With one, PostgreSQL waits a round trip at every batch
 * while Node finishes decoding the last rows; with two it always has the next batch to read, and Node
 * decodes one while the other arrives; three gain nothing (bench/README.md, "What the hot path does").
 */
const FETCHES_IN_FLIGHT = 2;

/**
 * The series of seriesSelect from a server-side cursor, `batchSize` rows at a time; at most
 * FETCHES_IN_FLIGHT batches are read ahead of the caller. Must run in a transaction, which also closes
 * the cursor.
 *
 * A declared cursor and FETCH rather than postgres.js's `.cursor()`: that one leaves the protocol
 * exchange open between batches, and a backend that dies at that moment (restart, failover,
 * pg_terminate_backend) leaves the driver's connection in a state where its next statement fails and
 * its reconnect waits for connect_timeout. Each FETCH is a complete exchange, so between batches the
 * session is simply idle in transaction, and a lost connection fails cleanly.
 */
export async function* measurementBatches(
  tx: Queryable,
  tubeId: number,
  from: string,
  to: string,
  batchSize: number,
): AsyncGenerator<MeasurementRow[]> {
  // The values' text must be the shortest that reads back as the same double: PostgreSQL's default
  // since 12 (extra_float_digits = 1), but a server, database or role setting of 0 or less would round
  // it. Sent with the DECLARE, which postgres.js pipelines: no extra round trip.
  await Promise.all([
    tx`set local extra_float_digits = 1`,
    tx`declare series_cursor no scroll cursor for ${seriesSelect(tx, tubeId, from, to)}`,
  ]);
  const text = `fetch forward ${Math.trunc(batchSize)} from series_cursor`;
  const fetch = () => {
    const rows = tx.unsafe<MeasurementRow[]>(text, [], { prepare: true }).execute();
    // Handled here too: when the caller stops early, a FETCH sent ahead is never awaited.
    rows.catch(() => {});
    return rows;
  };
  const inFlight = [fetch()];
  while (true) {
    const rows = await inFlight.shift()!;
    const more = rows.length === batchSize;
    // Refilled before the caller gets this batch (FETCHES_IN_FLIGHT). Past the end a FETCH returns no rows.
    if (more) while (inFlight.length < FETCHES_IN_FLIGHT) inFlight.push(fetch());
    if (rows.length > 0) yield rows;
    if (!more) return;
  }
}

/** The SQL of the measurements endpoint. Times travel as RFC 3339 text both ways: no Date objects. */
import type { Queryable } from '../connect.js';

export interface TubeRow {
  /** Internal id: what grants and measurements refer to. */
  id: number;
  unit: string;
  verticalDatum: string;
}

/** A tube by its identifier (canonical lower-case UUID text). */
export async function findTube(sql: Queryable, identifier: string): Promise<TubeRow | undefined> {
  const [tube] = await sql<TubeRow[]>`
    select id, unit, vertical_datum as "verticalDatum" from tubes where identifier = ${identifier}::uuid`;
  return tube;
}

export interface MeasurementRow {
  /** timestamptz as PostgreSQL prints it in a UTC ISO session: `2024-01-01 00:00:00.5+00`. */
  observedAt: string;
  value: number;
}

/**
 * The measurements of one tube in [from, to), oldest first, from a server-side cursor `batchSize` rows
 * at a time. The primary key (tube_id, observed_at) include (value) answers this with an index-only
 * scan, already in order. The next batch is fetched only when the caller asks for it.
 */
export function measurementBatches(
  sql: Queryable,
  tubeId: number,
  from: string,
  to: string,
  batchSize: number,
): AsyncIterable<MeasurementRow[]> {
  return sql<MeasurementRow[]>`
    select observed_at::text as "observedAt", value
    from measurements
    where tube_id = ${tubeId} and observed_at >= ${from}::timestamptz and observed_at < ${to}::timestamptz
    order by observed_at`.cursor(batchSize);
}

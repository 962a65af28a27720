/** How `measurements` stores its levels (src/db/valueStorage.ts), as the tests of the finish measure it. */
import type { Sql } from '../../src/db/connect.js';

/** Rows stored as doubles, as thousandths, and doubles that would fit thousandths (left to move). */
export async function stored(sql: Sql) {
  const [counts] = await sql<{ doubles: number; thousandths: number; fitting: number }[]>`
    select count(value)::int as doubles, count(value_thousandths)::int as thousandths,
           count(*) filter (where measurement_thousandths(value) is not null)::int as fitting
    from measurements`;
  return counts!;
}

/**
 * The bytes a row of the compressed chunks (each with its compressed table) on TimescaleDB, where the
 * goal of 3 applies; of the whole table on plain PostgreSQL, whose updated pages keep their room.
 */
export async function bytesPerRow(sql: Sql, timescale: boolean): Promise<number> {
  if (!timescale) {
    const [row] = await sql<{ bytes: number }[]>`
      select pg_total_relation_size('measurements')::float8 / (select count(*) from measurements) as bytes`;
    return row!.bytes;
  }
  const [row] = await sql<{ bytes: number }[]>`
    with compressed as (
      select format('%I.%I', c.schema_name, c.table_name)::regclass as chunk,
             format('%I.%I', cc.schema_name, cc.table_name)::regclass as batches
      from _timescaledb_catalog.chunk c
      join _timescaledb_catalog.chunk cc on cc.id = c.compressed_chunk_id
      join _timescaledb_catalog.hypertable h on h.id = c.hypertable_id
      where h.table_name = 'measurements'
    )
    select sum(pg_total_relation_size(chunk) + pg_total_relation_size(batches))::float8 /
           (select count(*) from measurements where observed_at < (
              select max(range_end) from timescaledb_information.chunks
              where hypertable_name = 'measurements' and is_compressed)) as bytes
    from compressed`;
  return row!.bytes;
}

/** Compressed chunks on native TimescaleDB, for the tests about reading and writing them. */
import type { Sql } from '../../src/db/connect.js';

export interface ChunkCompression {
  compressed: number;
  uncompressed: number;
}

/** How many of the measurements hypertable's chunks are compressed, and how many not. */
export async function chunkCompression(sql: Sql): Promise<ChunkCompression> {
  const [row] = await sql<ChunkCompression[]>`
    select count(*) filter (where is_compressed)::int as compressed,
           count(*) filter (where not is_compressed)::int as uncompressed
    from timescaledb_information.chunks where hypertable_name = 'measurements'`;
  return row!;
}

/** Compresses the chunks that end before `olderThan` (every chunk without it); then, how many are. */
export async function compressChunks(sql: Sql, olderThan?: string): Promise<ChunkCompression> {
  await sql`
    select compress_chunk(c, if_not_compressed => true)
    from show_chunks('measurements', older_than => ${olderThan ?? null}::timestamptz) c`;
  return chunkCompression(sql);
}

/**
 * The chunks of `measurements` a document reads, locked before its snapshot is taken
 * (docs/decisions/0114): TimescaleDB rewrites a chunk (compresses it, or recompresses it after a
 * correction) only under an ACCESS EXCLUSIVE lock of it, which then waits for the document, so no
 * rewrite falls between the document's snapshot and its rows.
 *
 * A lock takes no snapshot, but finding which chunks an interval covers is a query, which would. So each
 * pool keeps the list of chunks, read outside the document's transaction, and the document checks it in
 * its snapshot: a chunk created since (a newer chunk id than the list's newest) or one dropped since (its
 * lock fails) makes the list read again and the document start over, before anything was sent.
 */
import type { Queryable, Sql } from '../db/connect.js';

interface Chunk {
  /** Its qualified name, quoted for SQL. */
  name: string;
  /** Its range of observed_at, in epoch milliseconds: [from, to). */
  from: number;
  to: number;
}

/** The chunks of `measurements` as one snapshot saw them; no hypertable on plain PostgreSQL. */
export interface ChunkList {
  hypertable?: { id: number; newest: string; chunks: Chunk[] };
}

/** Thrown in a document's snapshot when its pool's list is behind: the document starts over. */
export class ChunksChanged extends Error {
  constructor() {
    super('the chunks of measurements changed since they were listed');
  }
}

/** SQLSTATE undefined_table: a listed chunk was dropped since. */
const UNDEFINED_TABLE = '42P01';

async function readList(pool: Sql): Promise<ChunkList> {
  const [installed] = await pool<{ catalog: boolean }[]>`
    select to_regclass('_timescaledb_catalog.hypertable') is not null as catalog`;
  if (!installed?.catalog) return {};
  const [hypertable] = await pool<{ id: number }[]>`
    select id from _timescaledb_catalog.hypertable
    where format('%I.%I', schema_name, table_name)::regclass = 'measurements'::regclass`;
  const id = hypertable?.id;
  if (id === undefined) return {};
  // One statement, one snapshot: the newest id is that of the chunks listed. Chunks that left the
  // catalog's table behind (a dropped one, in some versions) have no table to lock.
  const [read] = await pool<{ newest: string; chunks: Chunk[] }[]>`
    select (select coalesce(max(id), 0)::text from _timescaledb_catalog.chunk where hypertable_id = ${id}) as newest,
           (select coalesce(json_agg(json_build_object(
                     'name', format('%I.%I', c.schema_name, c.table_name),
                     'from', s.range_start / 1000, 'to', s.range_end / 1000)), '[]'::json)
            from _timescaledb_catalog.chunk c
            join _timescaledb_catalog.chunk_constraint cc on cc.chunk_id = c.id
            join _timescaledb_catalog.dimension_slice s on s.id = cc.dimension_slice_id
            where c.hypertable_id = ${id}
              and to_regclass(format('%I.%I', c.schema_name, c.table_name)) is not null) as chunks`;
  return { hypertable: { id, newest: read!.newest, chunks: read!.chunks } };
}

const lists = new WeakMap<Sql, Promise<ChunkList>>();

/** The pool's list of chunks, read again when `behind` (a list a document found behind) is the kept one. */
export async function chunkList(pool: Sql, behind?: ChunkList): Promise<ChunkList> {
  const kept = lists.get(pool);
  if (kept && (behind === undefined || (await kept) !== behind)) return kept;
  const reading = readList(pool);
  lists.set(pool, reading);
  reading.catch(() => lists.delete(pool));
  return reading;
}

/**
 * Sends, as the first statements of a document's transaction on `tx`, the lock of the chunks `list`
 * holds for [from, to) and the check of the list in the snapshot that the next statement takes; resolves
 * once both are answered, or throws ChunksChanged. Nothing on plain PostgreSQL.
 */
export function lockChunks(
  tx: Queryable,
  list: ChunkList,
  { from, to }: { from: string; to: string },
): Promise<void> | undefined {
  const table = list.hypertable;
  if (!table) return undefined;
  // Widened by a millisecond each way: an instant's microseconds are not in a Date. A bound Date cannot
  // read (none should reach here) locks every chunk on that side.
  const start = Date.parse(from) - 1 || Number.NEGATIVE_INFINITY;
  const end = Date.parse(to) + 1 || Number.POSITIVE_INFINITY;
  const names = table.chunks.filter((chunk) => chunk.from < end && chunk.to > start).map((c) => c.name);
  const locked =
    names.length > 0
      ? // Not prepared: its text is one of many (each interval's chunks).
        tx
          .unsafe(`lock table only ${names.join(', ')} in access share mode`, [], { prepare: false })
          .execute()
      : Promise.resolve([]);
  const checked = tx
    .unsafe<{ newest: string }[]>(
      `select coalesce(max(id), 0)::text as newest from _timescaledb_catalog.chunk where hypertable_id = ${table.id}`,
    )
    .execute();
  return Promise.all([
    locked.catch((error: unknown) => {
      throw (error as { code?: unknown }).code === UNDEFINED_TABLE ? new ChunksChanged() : error;
    }),
    checked,
  ]).then(([, [row]]) => {
    if (BigInt(row!.newest) > BigInt(table.newest)) throw new ChunksChanged();
  });
}

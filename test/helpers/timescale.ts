/** The API and compressed chunks on native TimescaleDB, for the tests about reading and writing them. */
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { addWell, type TubeFixture } from '../../testkit/fixtures.js';
import { startApi, type TestApi } from './api.js';
import { freshDatabase, timescaleServerOrSkip } from './database.js';

/**
 * The API on a database of its own on the suite's TimescaleDB, limits off, `env` added; undefined
 * (the test skipped) without that server.
 */
export async function timescaleApi(t: Test, env: Record<string, string> = {}): Promise<TestApi | undefined> {
  const server = timescaleServerOrSkip(t);
  if (!server) return undefined;
  const db = await freshDatabase(t, { server });
  const api = await startApi(t, { db, env: { LIMITS_ENABLED: 'false', ...env } });
  t.ok(await usesTimescaleDb(db.sql), 'measurements is a hypertable');
  return api;
}

/**
 * Four tubes of two wells: `second`, `tenth` and `empty` (numbers 2, 10 and 3) of well T 1, `other`
 * (in cm) of well T 0; in discovery's order other, second, empty, tenth.
 */
export async function fourTubes(
  sql: Sql,
): Promise<Record<'second' | 'tenth' | 'empty' | 'other', TubeFixture>> {
  const [second, tenth, empty] = await addWell(sql, 'T 1', [
    { number: '2' },
    { number: '10' },
    { number: '3' },
  ]);
  const [other] = await addWell(sql, 'T 0', [{ number: '1', unit: 'cm' }]);
  return { second: second!, tenth: tenth!, empty: empty!, other: other! };
}

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

/** Names of the chunks of `measurements` a plan (EXPLAIN in JSON) reads; a compressed one by its own name. */
export function chunksInPlan(plan: unknown): string[] {
  const names = [...JSON.stringify(plan).matchAll(/"Relation Name":"(_hyper_[^"]+)"/g)].map((m) => m[1]!);
  return [...new Set(names)].sort();
}

/** The chunks of `measurements` that hold instants of [from, to), by name. */
export async function chunksOverlapping(sql: Sql, from: string, to: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select chunk_name as name from timescaledb_information.chunks
    where hypertable_name = 'measurements' and range_start < ${to}::timestamptz and range_end > ${from}::timestamptz
    order by chunk_name`;
  return rows.map((row) => row.name).sort();
}

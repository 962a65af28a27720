/**
 * Years of hourly groundwater levels written straight into compressed chunks of `measurements`, chunk
 * by chunk, so that the disk never holds more than the chunks being written uncompressed.
 *
 * Each chunk is a table of its own, created and filled in one transaction (with `wal_level = minimal`
 * PostgreSQL writes no WAL for a table created in the filling transaction), without an index, then
 * attached to the hypertable as the chunk of its 30 days (`attach_chunk` builds the chunk's indexes
 * by sorting, far cheaper than keeping them row by row), then compressed. TimescaleDB's direct
 * compression on INSERT and COPY would skip the uncompressed step, but it refuses a table with a
 * primary key, and measurements has one.
 *
 * The levels vary as a well's do: a mean per tube, a seasonal swing of 0.25 to 1.25 m, a recharge swing
 * over weeks, a slow drift, and logger noise of a few millimetres, rounded to the millimetre. Constant
 * or smooth values would compress far better than real ones and make the bytes per row meaningless.
 */
import { connect } from '../../src/db/connect.js';

/** The hypertable's chunk interval (sql/002_timescaledb.sql); chunks start at multiples of it since 1970. */
export const CHUNK_MS = 30 * 86_400_000;
export const HOUR_MS = 3_600_000;

export interface History {
  /** Tube ids firstTube..lastTube, each with a row every hour. */
  firstTube: number;
  lastTube: number;
  /** A chunk boundary: the first hour. */
  from: number;
  chunks: number;
  /** Rows from here on are provisional (1), before it approved (0). */
  provisionalFrom: number;
}

export interface ChunkWritten {
  chunk: number;
  rows: number;
  fillMs: number;
  attachMs: number;
  compressMs: number;
}

/** The level of tube `t` at hour `h` of the history, in metres, to the millimetre. */
const LEVEL = `round((
    -1.5 + (t * 7919::int8 % 400)::float8 / 100
    + (0.25 + (t * 104729::int8 % 100)::float8 / 100) * sin(2 * pi() * h / 8766 + t)
    + 0.08 * sin(2 * pi() * h / 552 + t * 0.7)
    + (t % 7 - 3) * 0.02 * h / 8766
    + (random() - 0.5) * 0.004
  ) * 1000) / 1000`;

const instant = (ms: number) => new Date(ms).toISOString();

/**
 * Writes `history` with `writers` sessions at once, each taking the next chunk; `onChunk` hears of each.
 * The caller pauses the compression policy's job first: it would take the same chunks' locks.
 */
export async function writeHistory(
  url: string,
  history: History,
  writers: number,
  onChunk: (written: ChunkWritten) => void,
): Promise<void> {
  let next = 0;
  const writer = async () => {
    const sql = connect(url, { max: 1, applicationName: 'gwapi bench history' });
    try {
      for (let chunk = next++; chunk < history.chunks; chunk = next++) {
        onChunk(await writeChunk(sql, history, chunk));
      }
    } finally {
      await sql.end();
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
}

async function writeChunk(sql: ReturnType<typeof connect>, history: History, chunk: number) {
  const start = history.from + chunk * CHUNK_MS;
  const firstHour = chunk * (CHUNK_MS / HOUR_MS);
  const lastHour = firstHour + CHUNK_MS / HOUR_MS - 1;
  const provisionalHour = (history.provisionalFrom - history.from) / HOUR_MS;
  const table = `_timescaledb_internal.measurements_history_${instant(start).slice(0, 10).replaceAll('-', '')}`;
  const slices = JSON.stringify({ observed_at: [instant(start), instant(start + CHUNK_MS)] });
  let rows = 0;
  let fillMs = 0;
  let attachMs = 0;
  await sql.begin(async (tx) => {
    let started = performance.now();
    await tx.unsafe(`create table ${table} (like measurements including defaults including constraints)`);
    // Tube after tube, each in time order: the order compression reads them in.
    // Each level stored as the writers store it (sql/016): thousandths, by the one encoder.
    const inserted = await tx.unsafe(`
      insert into ${table} (tube_id, observed_at, value, value_thousandths, status)
      select t, to_timestamp(${history.from / 1000} + h * 3600::float8),
             case when stored.thousandths is null then level.value end, stored.thousandths,
             case when h >= ${provisionalHour} then 1 else 0 end
      from generate_series(${history.firstTube}, ${history.lastTube}) t,
           lateral generate_series(${firstHour}, ${lastHour}) h,
           lateral (select ${LEVEL} as value) level,
           lateral (select measurement_thousandths(level.value) as thousandths) stored`);
    rows = inserted.count;
    fillMs = performance.now() - started;
    started = performance.now();
    await tx.unsafe(`call attach_chunk('measurements', '${table}', '${slices}')`);
    attachMs = performance.now() - started;
  });
  const started = performance.now();
  await sql`select compress_chunk(${table}::regclass)`;
  return { chunk, rows, fillMs, attachMs, compressMs: performance.now() - started };
}

/**
 * Measurements import. Every row is checked in Node as the input streams by (the CSV's reader,
 * measurementCsv.ts, or a format's, formats/write.ts: rowReader.ts); then one of two paths writes the
 * rows, each in one transaction, so a file with any error imports nothing:
 *
 * - Direct (directMeasurements.ts): the rows go by binary COPY straight into `measurements`. A plain
 *   insert is exactly the upsert the import promises when no row of the file meets a stored row or
 *   another row of the file, and Node can vouch for that while streaming: each tube is looked up when
 *   the file first names it (registered, and nothing stored at or after its first instant in the
 *   file), and its instants must rise strictly from there. That is the common case, a logger's new
 *   readings, and it costs less than a CSV COPY into a table with this index
 *   (docs/decisions/0008-upsert-change-log.md): Node's parsing runs beside the server's inserting, which has
 *   no text to parse.
 * - Staging (stagedMeasurements.ts): the rows go by binary COPY, with their line numbers, into a
 *   temporary table; SQL then finds what needs the database (unknown tubes, duplicates by instant)
 *   and moves the rows by one INSERT or upsert. This handles every file: re-imports, corrections,
 *   unsorted files, and files with errors, which it reports in full.
 *
 * The direct path goes first and gives way at the first sign that it cannot take the file: a bad row,
 * an unknown tube, a tube another import is writing (changeLog.ts: imports of a tube take turns), a
 * stored row in the file's range, instants out of order, or a key violation. Its transaction is then rolled back, and the staging path
 * reads the input again from the start (importInput.ts). A file the direct path refuses is usually
 * refused within its first chunk, as a re-import is; the worst case, a problem near the end, reads the
 * file twice. A stream, which cannot be reopened, is kept in memory up to 64 MB while the direct path
 * reads it; a longer one goes to the staging path there.
 *
 * Should either path's transaction lose a deadlock (or a serialization conflict) to another import's, the
 * whole import runs again from the input's start, a few times at most (retry.ts): a stream only while
 * all of it read so far is kept.
 */
import { Readable } from 'node:stream';
import type { TransactionSql } from 'postgres';
import type { Sql } from '../../db/connect.js';
import { isTransactionConflict } from '../../db/errorCodes.js';
import { usesTimescaleDb } from '../../db/migrate.js';
import { CONFLICT_ATTEMPTS, retryIfConflicted } from '../../db/retry.js';
import { begin } from '../../db/transaction.js';
import { storesThousandths } from '../../db/valueStorage.js';
import { UserError } from '../../errors.js';
import { ErrorCollector } from '../importErrors.js';
import { LOCK_NOT_AVAILABLE } from './changeLog.js';
import { CopyFailedUnexplained, CopyIn } from './copy/copyIn.js';
import { copyRows } from './copyRows.js';
import { MeasurementCsv } from './csv/measurementCsv.js';
import { copyDirect, DirectPathRefused } from './directMeasurements.js';
import { type ImportInput, streamInput } from './importInput.js';
import type { OpenRowReader } from './rowReader.js';
import {
  createStaging,
  type MeasurementsImported,
  type RowsImported,
  type StagingRules,
  writeStaged,
} from './stagedMeasurements.js';
import { StagingRows } from './stagingRows.js';

export type { MeasurementsImported, RowsImported } from './stagedMeasurements.js';

export interface ImportOptions {
  /** How the input is named in error lines. */
  name: string;
  /** Distinct tubes remembered while reading (default 100,000); tests lower it to reach the fallback. */
  maxKeptTubes?: number;
}

const MAX_KEPT_TUBES = 100_000;

/** What reads the input, and how its rows are written, when it is not the measurements CSV. */
export interface RowsOptions extends ImportOptions, StagingRules {
  read: OpenRowReader;
}

/** Imports one CSV input, and closes it; throws `ImportRejected` (and imports nothing) when any row is bad. */
export async function importMeasurements(
  sql: Sql,
  input: Readable | ImportInput,
  options: ImportOptions,
): Promise<MeasurementsImported> {
  const { rows, inserted, updated, unchanged } = await importRows(sql, input, {
    ...options,
    read: (errors, sink) => new MeasurementCsv(options.name, errors, sink),
    duplicates: 'refuse',
    unknownTube: () => ({
      field: 'tubeIdentifier',
      reason: 'no tube with this identifier is registered (gwapi import registry)',
    }),
  });
  return { rows, inserted, updated, unchanged };
}

/**
 * Imports one input read by `options.read`, and closes it; throws `ImportRejected` (and imports nothing)
 * when it is bad, and `ImportConflicted` when its transaction kept losing deadlocks to other imports.
 */
export async function importRows(
  sql: Sql,
  input: Readable | ImportInput,
  options: RowsOptions,
): Promise<RowsImported> {
  const source = input instanceof Readable ? streamInput(input) : input;
  const maxTubes = options.maxKeptTubes ?? MAX_KEPT_TUBES;
  try {
    // Either path may lose a deadlock to another import (one locks its tubes as it meets them, in the
    // file's order): the file's whole import is run again, from its first byte.
    return await retryIfConflicted(
      () => importOnce(sql, source, { ...options, maxTubes }),
      () => source.rereadable !== false,
    );
  } catch (error) {
    if (isTransactionConflict(error)) {
      throw new ImportConflicted(options.name, source.rereadable !== false, error);
    }
    throw error;
  } finally {
    await source.close();
  }
}

/** The direct path, or the staging path where it gives way: one attempt at the whole input. */
async function importOnce(
  sql: Sql,
  source: ImportInput,
  options: RowsOptions & { maxTubes: number },
): Promise<RowsImported> {
  // Each path asks how levels are stored in its own transaction (valueStorage.ts).
  try {
    const { rows, byStatus } = await begin(
      sql,
      async (tx) => copyDirect(tx, source, { ...options, thousandths: await storesThousandths(tx) }),
      { write: true },
    );
    return { rows, inserted: rows, updated: 0, unchanged: 0, written: [...byStatus], duplicates: 0 };
  } catch (error) {
    if (!givesWay(error)) throw error;
  }
  return await begin(sql, (tx) => importStaged(tx, source.read(true), options), { write: true });
}

/** An input that is fine, not imported: another import's transaction and its kept deadlocking. */
export class ImportConflicted extends UserError {
  override name = 'ImportConflicted';

  constructor(name: string, rereadable: boolean, cause: unknown) {
    super(
      `${name}: not imported: it deadlocked with another import writing the same tubes ` +
        (rereadable
          ? `${CONFLICT_ATTEMPTS} times in a row`
          : 'and, a stream read past what is kept, could not be read again to retry') +
        '; nothing of it was written: import it again',
      { cause },
    );
  }
}

async function importStaged(
  tx: TransactionSql,
  chunks: AsyncIterable<Buffer>,
  options: RowsOptions & { maxTubes: number },
): Promise<RowsImported> {
  const errors = new ErrorCollector();
  const rows = new StagingRows(options.maxTubes);
  const reader = options.read(errors, rows);
  await createStaging(tx);
  const copy = new CopyIn(
    tx,
    async (q) => await q`copy measurement_staging from stdin (format binary)`.writable(),
  );
  await copyRows(tx, chunks, reader, rows, copy);
  return await writeStaged(
    tx,
    { rows: reader.rows, tubes: rows.tubes, hasStatus: reader.hasStatus },
    errors,
    options.name,
    { ...options, thousandths: await storesThousandths(tx) },
  );
}

/**
 * Besides its own refusals, the direct path gives way when its COPY fails on a key: another import has
 * committed the same rows since the tubes were looked up, which is the upsert's case (tube locks rule
 * that out among importers of this version; one of 1.1.0, which takes none, may still run beside it). A COPY that failed
 * without saying why (copyIn.ts) most likely failed on a key too; should it be anything else, the
 * staging path meets it again and reports it.
 */
function givesWay(error: unknown): boolean {
  if (error instanceof DirectPathRefused || error instanceof CopyFailedUnexplained) return true;
  const code = (error as { code?: string }).code;
  // A tube a file states, held by another import (copyRows.ts): the staging path waits its turn.
  return code === '23505' || code === LOCK_NOT_AVAILABLE;
}

/**
 * Where the change history stands before a write: every transaction that starts after this records its
 * change rows and corrections (changeLog.ts) with an xid at or above it. `vacuumMeasurements` takes it to
 * maintain only what was written since.
 */
export async function changeLogMark(sql: Sql): Promise<string> {
  const [row] = await sql<{ mark: string }[]>`select pg_snapshot_xmax(pg_current_snapshot())::text as mark`;
  return row!.mark;
}

/**
 * Keeps the statistics and the visibility map of `measurements` current after an import. Index-only
 * scans skip the heap only on pages the visibility map marks all-visible, and without that the
 * planner prefers a bitmap scan plus a sort for a series. Runs outside any transaction (VACUUM must).
 *
 * COPY extends a table dozens of pages at a time and leaves the unused ones at its end, all zeros:
 * VACUUM never marks such a page all-visible, and truncates a tail this short only when it has skipped
 * the rest of the table (it then reads the tail to see that it is empty). So a second VACUUM, which
 * skips every page the first one marked, removes them; it reads a few dozen pages. That one analyzes:
 * the row count is then ANALYZE's, not the extrapolation of a VACUUM that read a few pages.
 *
 * `since` (changeLogMark, taken before the writes): only what was written since, as the change history
 * records it. On a hypertable that is the chunks whose ranges hold a change row or a correction of a
 * transaction since (another writer's among them, which needs the same); VACUUM and ANALYZE of the
 * hypertable would read every chunk, a cost that grows with the history. A plain table is one
 * relation, and needs nothing when nothing was written.
 */
export async function vacuumMeasurements(sql: Sql, since?: string): Promise<void> {
  const relations = since === undefined ? ['measurements'] : await writtenRelations(sql, since);
  if (relations.length === 0) return;
  const list = relations.join(', ');
  await sql.unsafe(`vacuum ${list}`);
  await sql.unsafe(`vacuum (analyze) ${list}`);
}

/** The relations of `measurements` that hold what was written since `since`, quoted. */
async function writtenRelations(sql: Sql, since: string): Promise<string[]> {
  const written = sql`
    select first_at, last_at from measurement_changes where xid >= ${since}::xid8
    union all
    select observed_at, observed_at from measurement_corrections where xid >= ${since}::xid8`;
  if (!(await usesTimescaleDb(sql))) {
    const [any] = await sql`select from (${written}) w limit 1`;
    return any ? ['measurements'] : [];
  }
  const chunks = await sql<{ name: string }[]>`
    select format('%I.%I', c.chunk_schema, c.chunk_name) as name
    from timescaledb_information.chunks c
    where c.hypertable_name = 'measurements'
      and exists (select from (${written}) w where w.first_at < c.range_end and w.last_at >= c.range_start)
    order by c.range_start`;
  return chunks.map((chunk) => chunk.name);
}

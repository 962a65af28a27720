/**
 * Measurements import: the CSV streams through Node (checked row by row, measurementEncoder.ts) into a
 * temporary staging table by binary COPY; then SQL checks and moves the rows (stagedMeasurements.ts).
 * All in one transaction: a file with any error imports nothing.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Sql } from '../db/connect.js';
import { ErrorCollector } from './importErrors.js';
import { MeasurementEncoder } from './measurementEncoder.js';
import { createStaging, type MeasurementsImported, writeStaged } from './stagedMeasurements.js';

export type { MeasurementsImported } from './stagedMeasurements.js';

export interface ImportOptions {
  /** How the input is named in error lines. */
  name: string;
  /** Called as the input is read, with the lines read so far. */
  onLines?: (lines: number) => void;
  /** Distinct tubes remembered while reading (default 100,000); tests lower it to reach the fallback. */
  maxKeptTubes?: number;
}

/** Imports one CSV stream; throws `ImportRejected` (and imports nothing) when any row is bad. */
export async function importMeasurements(
  sql: Sql,
  input: Readable,
  options: ImportOptions,
): Promise<MeasurementsImported> {
  const errors = new ErrorCollector();
  const encoder = new MeasurementEncoder(options.name, errors, options.onLines, options.maxKeptTubes);
  return await sql.begin(async (tx) => {
    await createStaging(tx);
    const copy = await tx`copy measurement_staging from stdin (format binary)`.writable();
    await pipeline(input, encoder, copy);
    return await writeStaged(tx, { rows: encoder.rows, tubes: encoder.tubes }, errors, options.name);
  });
}

/**
 * Keeps the statistics and the visibility map of `measurements` current after an import. Index-only
 * scans skip the heap only on pages the visibility map marks all-visible, and without that the
 * planner prefers a bitmap scan plus a sort for a series. Runs outside any transaction (VACUUM must).
 */
export async function vacuumMeasurements(sql: Sql): Promise<void> {
  await sql`vacuum (analyze) measurements`;
}

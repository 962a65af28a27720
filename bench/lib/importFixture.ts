/**
 * The import benchmarks' input (the import scenario): a year of 1-minute data for
 * one tube as a logger exports it, the registry that tube is in, and the server settings they import
 * under.
 */
import { writeFile } from 'node:fs/promises';
import { formatInstant } from '../../src/domain/datetime.js';

/** A year of 1-minute data: 366 days (2023-01-01 to 2024-01-02). */
export const YEAR_ROWS = 527_040;
export const IMPORT_TUBE = '5a1c0b9e-6f3d-4c1e-9d2a-0b7e4f8a1c33';
/** The file's first instant, seconds since the epoch. */
export const IMPORT_START = Date.UTC(2023, 0, 1) / 1000;
/** The registry holding IMPORT_TUBE, as `upsertRegistry` and `gwapi import registry` take it. */
export const IMPORT_REGISTRY = [{ name: 'bench', tubes: [{ identifier: IMPORT_TUBE, number: '1' }] }];

/**
 * Durable, unlike the other benchmarks' server: every import and COPY ends in a commit whose WAL flush
 * is part of its cost on a real server (and the figures in bench/README.md were measured so).
 */
export const DURABLE_SETTINGS = { fsync: 'on', full_page_writes: 'on' };

/**
 * One value a minute from IMPORT_START, `rows` of them, like a logger's export; `withStatus`: with the
 * status column, as a checked export carries it (approved, the last tenth provisional, every 1,000th
 * rejected).
 */
export async function writeYearCsv(file: string, rows = YEAR_ROWS, withStatus = false): Promise<void> {
  const lines = [`tubeIdentifier,observedAt,value${withStatus ? ',status' : ''}`];
  for (let i = 0; i < rows; i++) {
    const level = (-1.5 + Math.sin(i / 1440) * 0.4 + (i % 97) / 1000).toFixed(3);
    const at = formatInstant({ seconds: IMPORT_START + i * 60, micros: 0 });
    const status = i % 1000 === 999 ? 'rejected' : i >= rows * 0.9 ? 'provisional' : 'approved';
    lines.push(`${IMPORT_TUBE},${at},${level}${withStatus ? `,${status}` : ''}`);
  }
  await writeFile(file, `${lines.join('\n')}\n`);
}

/** Wall time of `work`, seconds. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

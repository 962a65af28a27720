/**
 * The import's direct path (when and why: measurements.ts): binary COPY straight into `measurements`,
 * each tube looked up here when the file first names it, the rows watched by DirectRows. It throws
 * `DirectPathRefused` at the first sign that the staging path must take the file.
 */
import type { TransactionSql } from 'postgres';
import { measurementColumns } from '../../db/valueStorage.js';
import { ErrorCollector } from '../importErrors.js';
import {
  LOCK_NOT_AVAILABLE,
  lockTubes,
  recordDirectDays,
  recordDirectLatest,
  recordDirectRuns,
} from './changeLog.js';
import { CopyIn } from './copy/copyIn.js';
import { copyRows } from './copyRows.js';
import { DirectRows, type DirectTube } from './directRows.js';
import type { ImportInput } from './importInput.js';
import type { OpenRowReader } from './rowReader.js';

/** Not an error of the file: the direct path cannot vouch for it, and the staging path must take it. */
/** Summed rollup rows beyond this are written while the file is read, so that they do not pile up. */
const DAY_BATCH = 10_000;

export class DirectPathRefused extends Error {
  override name = 'DirectPathRefused';
}

export interface DirectOptions {
  read: OpenRowReader;
  /** More distinct tubes than this go to the staging path. */
  maxTubes: number;
  /** The database stores thousandths (valueStorage.ts). */
  thousandths: boolean;
}

/** Copies the file into `measurements`; returns its rows, all of them inserted. */
export async function copyDirect(
  tx: TransactionSql,
  input: ImportInput,
  options: DirectOptions,
): Promise<{ rows: number; byStatus: readonly number[] }> {
  // The errors of the file are reported by the staging path, which finds them all (duplicates too).
  const errors = new ErrorCollector();
  const rows = new DirectRows(options.maxTubes, options.thousandths);
  const reader = options.read(errors, rows);
  const columns = measurementColumns(options.thousandths);
  const copy = new CopyIn(
    tx,
    async (q) => await q`copy measurements (${q.unsafe(columns)}) from stdin (format binary)`.writable(),
  );
  const prepare = async () => {
    const refusal =
      (errors.total > 0 ? 'the file has bad rows' : undefined) ??
      rows.refusal ??
      (input.full ? 'the input is too long to be read twice' : undefined);
    if (refusal) throw new DirectPathRefused(refusal);
    const tubes = rows.newTubes();
    if (tubes.length > 0) {
      await copy.end();
      await lookUpTubes(tx, tubes);
      rows.identify();
    }
    // Every tube is identified by now, and its closed days are final: a later day of it has come. The
    // database sums a day left to it from the stored rows: all of that day's once the chunk's are sent.
    if (rows.days.waiting >= DAY_BATCH) {
      await copy.write(rows.take());
      await copy.end();
      await Promise.all(recordDirectDays(tx, rows.days.takeSummed(), rows.days.takeLeft()));
    }
  };
  // Tubes the file states are locked as it names them too, so without waiting (lookUpTubes).
  await copyRows(tx, input.read(), reader, rows, copy, prepare, { nowait: true });
  // Every tube the file names got rows, all of them new, and no others in its range (lookUpTubes).
  // Sent together (a query is sent when awaited, so in this order), without a round trip between them.
  rows.days.finish();
  await Promise.all([
    recordDirectRuns(tx, rows.runs()),
    recordDirectLatest(tx, rows.latest()),
    ...recordDirectDays(tx, rows.days.takeSummed(), rows.days.takeLeft()),
  ]);
  return { rows: reader.rows, byStatus: reader.rowsByStatus ?? [] };
}

/**
 * Sets the ids of tubes met for the first time, provided each is registered and has no stored row at or
 * after its first instant in the file (its later rows only rise from there). The tubes are locked first
 * (changeLog.ts), without waiting: a tube another import holds sends the file to the staging path,
 * which waits its turn. The lock is sent in the same round trip, and the lookup's snapshot follows it.
 */
async function lookUpTubes(tx: TransactionSql, tubes: readonly DirectTube[]): Promise<void> {
  const locked = lockTubes(
    tx,
    tubes.map((t) => t.identifier),
    { nowait: true },
  ).execute();
  const lookup = tx<{ id: number | null; stored: boolean }[]>`
    select t.id, exists (
        select from measurements m
        where m.tube_id = t.id and m.observed_at >= to_timestamp(i.seconds) + i.micros * interval '1 microsecond'
      ) as stored
    from unnest(${tubes.map((t) => t.identifier)}::uuid[], ${tubes.map((t) => t.first.seconds)}::float8[],
                ${tubes.map((t) => t.first.micros)}::int[]) with ordinality as i (identifier, seconds, micros, n)
    left join tubes t on t.identifier = i.identifier
    order by i.n`.execute();
  // Both settled before either fails: a refused lock fails the lookup too (the transaction is aborted).
  const [lock, found] = await Promise.allSettled([locked, lookup]);
  if (lock.status === 'rejected') {
    if ((lock.reason as { code?: string }).code === LOCK_NOT_AVAILABLE) {
      throw new DirectPathRefused('another import holds a tube of the file');
    }
    throw lock.reason;
  }
  if (found.status === 'rejected') throw found.reason;
  for (const [i, row] of found.value.entries()) {
    if (row.id === null) throw new DirectPathRefused('the file names an unknown tube');
    if (row.stored) throw new DirectPathRefused('the file reaches into stored rows of a tube');
    tubes[i]!.id = row.id;
  }
}

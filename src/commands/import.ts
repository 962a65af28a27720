/** `gwapi import registry|measurements|<format>`: open the input and the database, import, report. */
import type { Settings } from '../config.js';
import { UserError } from '../errors.js';
import { FORMAT_READERS, type FormatCommand } from '../importers/formats/index.js';
import type { FormatOptions } from '../importers/formats/reader.js';
import { describeImport, importFormatFile } from '../importers/formats/write.js';
import { ImportRejected } from '../importers/importErrors.js';
import { displayName, openInput } from '../importers/inputFile.js';
import { pruneChangeLog } from '../importers/measurements/changeLog.js';
import {
  changeLogMark,
  importMeasurements,
  vacuumMeasurements,
} from '../importers/measurements/measurements.js';
import { progressLine, readingShown } from '../importers/progress.js';
import { importRegistryFile } from '../importers/registry/registryFile.js';
import { withDatabase } from './database.js';

const count = (n: number) => n.toLocaleString('en-US');

/** Prints a refused file's error lines before the one-line summary that the CLI prints. */
async function reportingRejection<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ImportRejected) process.stderr.write(error.report());
    throw error;
  }
}

export async function importRegistryCommand(settings: Settings, file: string): Promise<void> {
  const counts = await withDatabase(settings, 'gwapi import registry', (sql) =>
    reportingRejection(importRegistryFile(sql, file)),
  );
  process.stdout.write(
    `imported ${count(counts.wells)} ${counts.wells === 1 ? 'well' : 'wells'} and ` +
      `${count(counts.tubes)} ${counts.tubes === 1 ? 'tube' : 'tubes'} from ${file}\n`,
  );
}

export async function importMeasurementsCommand(settings: Settings, file: string): Promise<void> {
  const opened = await openInput(file);
  const name = displayName(file);
  await withDatabase(settings, 'gwapi import measurements', async (sql) => {
    const started = performance.now();
    const progress = progressLine(process.stderr, name, opened.size);
    const since = await changeLogMark(sql);
    const imported = await reportingRejection(
      importMeasurements(sql, readingShown(opened, progress), { name }),
    ).finally(progress.done);
    await vacuumMeasurements(sql, since);
    if (settings.SYNC_HISTORY_DAYS !== undefined) await pruneChangeLog(sql, settings.SYNC_HISTORY_DAYS);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `imported ${count(imported.rows)} ${imported.rows === 1 ? 'row' : 'rows'} from ${name}: ` +
        `${count(imported.inserted)} inserted, ${count(imported.updated)} updated, ` +
        `${count(imported.unchanged)} unchanged in ${seconds.toFixed(1)} s ` +
        `(${count(Math.round(imported.rows / seconds))} rows/s)\n`,
    );
  });
}

/**
 * `gwapi import bro-gmw|bro-gld|dino|fews FILE…`: each file in its own transaction, in order. A refused
 * file is reported and the next ones still import; the command fails if any was refused.
 */
export async function importFormatCommand(
  settings: Settings,
  command: FormatCommand,
  files: readonly string[],
  options: FormatOptions,
): Promise<void> {
  const read = FORMAT_READERS[command];
  if (files.filter((file) => file === '-').length > 1) {
    throw new UserError('standard input (-) can be read once only');
  }
  const refused: UserError[] = [];
  await withDatabase(settings, `gwapi import ${command}`, async (sql) => {
    const since = await changeLogMark(sql);
    for (const file of files) {
      const name = displayName(file);
      try {
        const opened = await openInput(file);
        const started = performance.now();
        const progress = progressLine(process.stderr, name, opened.size);
        const imported = await importFormatFile(sql, readingShown(opened, progress), read, {
          ...options,
          name,
        }).finally(progress.done);
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(`imported ${name}: ${describeImport(imported)} in ${seconds.toFixed(1)} s\n`);
      } catch (error) {
        // A file that cannot be read or is refused; anything else (the database gone) ends the command.
        if (!(error instanceof UserError)) throw error;
        if (error instanceof ImportRejected) process.stderr.write(error.report());
        if (files.length === 1) throw error;
        process.stderr.write(`gwapi: ${error.message}\n`);
        refused.push(error);
      }
    }
    await vacuumMeasurements(sql, since);
    if (settings.SYNC_HISTORY_DAYS !== undefined) await pruneChangeLog(sql, settings.SYNC_HISTORY_DAYS);
  });
  if (refused.length > 0) {
    throw new UserError(
      `${count(refused.length)} of ${count(files.length)} files refused; the others were imported`,
    );
  }
}

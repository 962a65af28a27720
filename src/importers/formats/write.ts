/**
 * The one write path of the field's files (BRO GMW and GLD, DINO, FEWS): one file, read by its format's
 * reader, imported in one transaction through the measurements import's own paths (measurements.ts),
 * so validation, the change log, daily rollups, latest, series versions and sync tokens behave as for a
 * CSV import. The tubes a file states are written first, through the registry's writer; of two levels
 * of one tube and instant the higher priority, then the later line, is kept.
 */
import type { Readable } from 'node:stream';
import type { Sql } from '../../db/connect.js';
import { STATUSES } from '../../domain/status.js';
import type { ImportInput } from '../measurements/importInput.js';
import { importRows } from '../measurements/measurements.js';
import { type FormatRows, formatRows } from './formatRows.js';
import type { FormatOptions, ReaderFactory } from './reader.js';

export interface FormatImportOptions extends FormatOptions {
  /** How the file is named in errors and the report. */
  name: string;
}

/** What one file brought, as its report tells it. */
export interface FormatImported {
  /** Distinct tubes the file stated. */
  tubes: number;
  /** Points read: levels, and points skipped. */
  points: number;
  /** Levels inserted or updated, by status. */
  written: Record<(typeof STATUSES)[number], number>;
  inserted: number;
  updated: number;
  /** Levels as stored already. */
  unchanged: number;
  /** Points left out, by reason; a repeated time of a tube is `duplicate time`. */
  skipped: Map<string, number>;
  /** What was left out of the stated tubes, by reason: how many tubes. */
  notes: Map<string, number>;
}

/** The reason the report counts a level under when another of its tube and time wins. */
export const DUPLICATE_TIME = 'duplicate time';

/** Imports one file, and closes it; throws `ImportRejected` (and writes nothing of the file) when it is refused. */
export async function importFormatFile(
  sql: Sql,
  input: Readable | ImportInput,
  read: ReaderFactory,
  options: FormatImportOptions,
): Promise<FormatImported> {
  // The reading that completed is the last opened (the staging path reads the file again).
  let last: FormatRows | undefined;
  const imported = await importRows(sql, input, {
    name: options.name,
    read: formatRows(options.name, read, options, (rows) => {
      last = rows;
    }),
    duplicates: 'keep one',
    unknownTube: (identifier, rows) => ({
      field: 'tube',
      reason:
        `no tube ${identifier} is registered (${rows === 1 ? 'a level' : `${count(rows)} levels`} of it ` +
        'from this line on): import the file that describes it first (gwapi import bro-gmw, or gwapi import registry)',
    }),
    unknownTubeOnce: true,
  });
  const rows = last!;
  const skipped = new Map(rows.skipped);
  if (imported.duplicates > 0) {
    skipped.set(DUPLICATE_TIME, (skipped.get(DUPLICATE_TIME) ?? 0) + imported.duplicates);
  }
  let points = imported.rows;
  for (const count of rows.skipped.values()) points += count;
  return {
    tubes: rows.statedIdentifiers.size,
    points,
    written: Object.fromEntries(
      STATUSES.map((status, code) => [status, imported.written[code] ?? 0]),
    ) as FormatImported['written'],
    inserted: imported.inserted,
    updated: imported.updated,
    unchanged: imported.unchanged,
    skipped,
    notes: rows.notes,
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * `n thing` or `n things`: a reason is a noun phrase that ends in its noun (`control reading`), named
 * more closely after a colon (`mm value: locationId B1, parameterId P`).
 */
function counted(n: number, reason: string): string {
  const colon = reason.indexOf(': ');
  const thing = colon < 0 ? reason : reason.slice(0, colon);
  const naming = colon < 0 ? '' : reason.slice(colon);
  return `${count(n)} ${n === 1 || thing.endsWith('s') ? thing : `${thing}s`}${naming}`;
}

/** `a, b and c`. */
const listed = (parts: readonly string[]) =>
  parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;

/**
 * The report of one file: `1 tube stated; 13,316 points read: 13,022 provisional and 17 rejected written;
 * 277 duplicate times`.
 */
export function describeImport(imported: FormatImported): string {
  const parts: string[] = [];
  if (imported.tubes > 0) parts.push(`${counted(imported.tubes, 'tube')} stated`);
  const written = STATUSES.filter((status) => imported.written[status] > 0).map(
    (status) => `${count(imported.written[status])} ${status}`,
  );
  const outcome = [written.length > 0 ? `${listed(written)} written` : 'nothing written'];
  if (imported.unchanged > 0) outcome.push(`${count(imported.unchanged)} unchanged`);
  const skipped = [...imported.skipped].map(([reason, n]) => counted(n, reason));
  parts.push(
    `${counted(imported.points, 'point')} read: ${outcome.join(', ')}` +
      (skipped.length > 0 ? `; ${skipped.join(', ')}` : ''),
  );
  for (const [reason, n] of imported.notes) parts.push(`${reason} of ${counted(n, 'tube')}`);
  return parts.join('; ');
}

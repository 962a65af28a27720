/**
 * `gwapi keys …`: thin wrappers around the key store. Standard output carries only what a script would
 * capture (the key and key id, the table, the confirmation); warnings and notes go to standard error.
 */
import type { Settings } from '../config.js';
import { createKey, grantKey, type KeySummary, listKeyRecords, listKeys, revokeKey } from '../keys/store.js';
import { withDatabase } from './database.js';

export interface CreateKeyOptions {
  name: string;
  tube: string[];
  allTubes: boolean;
}

/** RFC 3339 in UTC to the second: precise enough for an operator, short enough for a table. */
const timestamp = (date: Date) => `${date.toISOString().slice(0, 19)}Z`;

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export async function createKeyCommand(settings: Settings, options: CreateKeyOptions): Promise<void> {
  const { key, keyId } = await withDatabase(settings, 'gwapi keys create', (sql) =>
    createKey(sql, { name: options.name, tubeIdentifiers: options.tube, allTubes: options.allTubes }),
  );
  process.stdout.write(`${key}\n${keyId}\n`);
  if (!options.allTubes && options.tube.length === 0) {
    process.stderr.write(
      `warning: ${keyId} may read no tube yet, so the API answers it with 403; ` +
        `grant tubes with \`gwapi keys grant ${keyId} --tube UUID\`\n`,
    );
  }
  process.stderr.write('The key is shown only now: it is stored as a hash and cannot be recovered.\n');
}

export async function grantKeyCommand(
  settings: Settings,
  keyId: string,
  options: { tube: string[] },
): Promise<void> {
  const { granted, alreadyGranted } = await withDatabase(settings, 'gwapi keys grant', (sql) =>
    grantKey(sql, keyId, options.tube),
  );
  const already = alreadyGranted > 0 ? ` (${plural(alreadyGranted, 'tube')} already granted)` : '';
  process.stdout.write(`granted ${keyId} ${plural(granted, 'more tube')}${already}\n`);
}

export async function revokeKeyCommand(settings: Settings, keyId: string): Promise<void> {
  const { revokedAt, alreadyRevoked } = await withDatabase(settings, 'gwapi keys revoke', (sql) =>
    revokeKey(sql, keyId),
  );
  process.stdout.write(
    alreadyRevoked
      ? `${keyId} was already revoked at ${timestamp(revokedAt)}\n`
      : `revoked ${keyId}: every replica refuses it within 10 seconds\n`,
  );
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function keyRow(key: KeySummary): string[] {
  return [
    key.keyId,
    key.name,
    timestamp(key.createdAt),
    key.revokedAt ? timestamp(key.revokedAt) : '-',
    key.allTubes ? 'all' : String(key.grantCount),
  ];
}

export async function listKeysCommand(settings: Settings, options: { json: boolean }): Promise<void> {
  if (options.json) {
    // One key per line, its fields in a fixed order: two databases' lists compare with `diff`.
    const records = await withDatabase(settings, 'gwapi keys list', listKeyRecords);
    for (const record of records) process.stdout.write(`${JSON.stringify(record)}\n`);
    return;
  }
  const keys = await withDatabase(settings, 'gwapi keys list', listKeys);
  const header = ['ID', 'NAME', 'CREATED', 'REVOKED', 'GRANTS'];
  process.stdout.write(`${formatTable([header, ...keys.map(keyRow)])}\n`);
  if (keys.length === 0)
    process.stderr.write('no keys yet: create one with `gwapi keys create --name NAME`\n');
}

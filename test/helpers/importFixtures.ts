/** What the import and endpoint tests share: registries (TUBE, OTHER, THIRD), rows, an importer. */

import { Readable } from 'node:stream';
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import type { ImportInput } from '../../src/importers/measurements/importInput.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { type RegistryWell, upsertRegistry } from '../../src/importers/registry/registry.js';
import { freshDatabase } from './database.js';

export const TUBE = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
export const OTHER = '1b4e28ba-2fa1-11d2-883f-0016d3cca428';
export const HEADER = 'tubeIdentifier,observedAt,value\n';

/** `count` CSV rows of `tube`, one a minute from `start` (ISO), value = minute index + `offset`. */
export function minuteRows(tube: string, start: string, count: number, offset = 0): string[] {
  const first = Date.parse(start);
  return Array.from(
    { length: count },
    (_, i) => `${tube},${new Date(first + i * 60_000).toISOString()},${i + offset}`,
  );
}

/** A CSV file of `rows`, with its header. */
export const csvOf = (rows: string[]) => `${HEADER}${rows.join('\n')}\n`;

/** TUBE and OTHER in well W1. */
export const TWO_TUBES: RegistryWell[] = [
  {
    name: 'W1',
    tubes: [
      { identifier: TUBE, number: '1' },
      { identifier: OTHER, number: '2' },
    ],
  },
];

/** A tube of another well: outside every selection of TUBE and OTHER but the one of all tubes. */
export const THIRD = '1b4e28ba-2fa1-11d2-883f-0016d3cca429';

/** TUBE (in `unit` when given) and OTHER in well W, THIRD in well X. */
export const threeTubes = (unit?: string): RegistryWell[] => [
  {
    name: 'W',
    tubes: [
      { identifier: TUBE, number: '1', ...(unit && { unit }) },
      { identifier: OTHER, number: '2' },
    ],
  },
  { name: 'X', tubes: [{ identifier: THIRD, number: '1' }] },
];

/** A fresh database with TWO_TUBES registered, on the suite's PostgreSQL or on `server`. */
export async function registeredDatabase(t: Test, server?: string): Promise<Sql> {
  const { sql } = await freshDatabase(t, server ? { server } : {});
  await upsertRegistry(sql, TWO_TUBES);
  return sql;
}

/** Rows imported by the real importer, each call one import (file) of its own, as an operator runs them. */
export function rowImporter(
  sql: Sql,
): (rows: [tube: string, observedAt: string, value: string][]) => Promise<void> {
  let imports = 0;
  return async (rows) => {
    const csv = HEADER + rows.map((row) => row.join(',')).join('\n');
    await importMeasurements(sql, Readable.from([Buffer.from(csv)]), { name: `import ${++imports}` });
  };
}

/**
 * An import whose transaction stays open, after it has locked its tube (and so has an xid) and sent its
 * first rows, until `release` is called.
 */
export function heldImport(sql: Sql, lines: string[]) {
  let reached!: () => void;
  const holding = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const half = Math.floor(lines.length / 2);
  const input: ImportInput = {
    full: false,
    async *read() {
      yield Buffer.from(csvOf(lines.slice(0, half)));
      // Asked for only once the first chunk's tubes are looked up (and locked) and its rows sent.
      reached();
      await released;
      yield Buffer.from(`${lines.slice(half).join('\n')}\n`);
    },
    async close() {},
  };
  const done = importMeasurements(sql, input, { name: 'held.csv' });
  return { holding, release, done };
}

/** The registry the measurements import tests share: one well with two tubes. */
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
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

/** A fresh database with TUBE and OTHER registered in well W1. */
export async function registeredDatabase(t: Test): Promise<Sql> {
  const { sql } = await freshDatabase(t);
  await upsertRegistry(sql, [
    {
      name: 'W1',
      tubes: [
        { identifier: TUBE, number: '1' },
        { identifier: OTHER, number: '2' },
      ],
    },
  ]);
  return sql;
}

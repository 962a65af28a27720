/** The order in which discovery lists wells and tubes, and every response that lists many tubes. */
import { naturalCompare } from './naturalOrder.js';

export interface TubeOfWell {
  wellName: string;
  identifier: string;
  number: string;
}

/** Rows of (well, tube) → wells with their tubes, wells by name and tubes by number, both natural. */
export function groupWells<T extends TubeOfWell>(rows: readonly T[]): { name: string; tubes: T[] }[] {
  const wells = new Map<string, { name: string; tubes: T[] }>();
  for (const row of rows) {
    const well = wells.get(row.wellName) ?? { name: row.wellName, tubes: [] };
    well.tubes.push(row);
    wells.set(row.wellName, well);
  }
  const sorted = [...wells.values()].sort((a, b) => naturalCompare(a.name, b.name));
  for (const well of sorted) well.tubes.sort((a, b) => naturalCompare(a.number, b.number));
  return sorted;
}

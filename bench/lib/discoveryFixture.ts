/** The discovery benchmarks' registry: 1,000 wells × 3 tubes and a key that sees them all. */
import type { Sql } from '../../src/db/connect.js';
import { addKey } from '../../testkit/fixtures.js';

export const WELLS = 1000;
export const TUBES_PER_WELL = 3;

/** Fills the registry; returns the key. */
export async function addDiscoveryFixture(sql: Sql): Promise<string> {
  await sql`
    with w as (insert into wells (name) select 'Well ' || i from generate_series(1, ${WELLS}) i returning id)
    insert into tubes (identifier, well_id, number)
    select gen_random_uuid(), w.id, n::text from w, generate_series(1, ${TUBES_PER_WELL}) n`;
  return (await addKey(sql, { allTubes: true })).key;
}

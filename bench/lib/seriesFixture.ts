/**
 * The data of the series benchmarks: one tube with 1-minute data from 2024-01-01 (a leap year, so 366
 * days are 527,040 rows), generated in SQL, and a key that reads it. Optionally other tubes with the
 * same amount of data each, written interleaved in time with ours (as loggers' imports of a network
 * arrive), so that our tube's index pages are scattered among theirs.
 */
import type { Sql } from '../../src/db/connect.js';
import { vacuumMeasurements } from '../../src/importers/measurements/measurements.js';
import { addKey, addRegularSeries, addWell } from '../../test/helpers/fixtures.js';

export const SERIES_START = '2024-01-01T00:00:00Z';
export const MINUTES_PER_DAY = 1440;

export interface SeriesFixture {
  tubeId: number;
  identifier: string;
  key: string;
}

/** `days` after SERIES_START, as RFC 3339 UTC. */
export const dayAfterStart = (days: number) =>
  new Date(Date.parse(SERIES_START) + days * 86_400_000).toISOString().replace('.000Z', 'Z');

export async function addSeriesFixture(
  sql: Sql,
  options: { otherTubes?: number } = {},
): Promise<SeriesFixture> {
  const others = options.otherTubes ?? 0;
  const half = Math.floor(others / 2);
  // Our tube in the middle of the others by internal id, so its index entries sit between theirs.
  const tubes = await addWell(
    sql,
    'Bench',
    Array.from({ length: others + 1 }, (_, i) => ({ number: String(i + 1) })),
  );
  const ours = tubes[half]!;
  const end = dayAfterStart(366);
  if (others === 0) {
    await addRegularSeries(sql, ours.id, SERIES_START, end, '1 minute');
  } else {
    // One statement, ordered by time, so the tubes' rows are written interleaved.
    await sql`
      insert into measurements (tube_id, observed_at, value)
      select tube.id, t, round((sin(extract(epoch from t) / 86400 + tube.id) * 2)::numeric, 3)::float8
      from generate_series(${SERIES_START}::timestamptz, ${end}::timestamptz - interval '1 minute', interval '1 minute') as t
      cross join (select id from tubes order by id) as tube
      order by t, tube.id`;
  }
  // As `gwapi import measurements` leaves it: visibility map set (index-only scans), statistics current.
  await vacuumMeasurements(sql);
  const { key } = await addKey(sql, { tubeIds: [ours.id] });
  return { tubeId: ours.id, identifier: ours.identifier, key };
}

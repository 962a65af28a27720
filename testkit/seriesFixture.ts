/**
 * The data of the series benchmarks, drills and tests: one tube with 1-minute data from 2024-01-01 (a
 * leap year, so 366 days are 527,040 rows), generated in SQL, and a key that reads it. Optionally other
 * tubes with the same amount of data each, written interleaved in time with ours (as loggers' imports of
 * a network arrive), so that our tube's index pages are scattered among theirs.
 */
import type { Sql } from '../src/db/connect.js';
import { vacuumMeasurements } from '../src/importers/measurements/measurements.js';
import { addKey, addRegularSeries, addWell, insertMeasurements } from './fixtures.js';

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
    await insertInterleaved(sql, '1 minute');
  }
  // As `gwapi import measurements` leaves it: visibility map set (index-only scans), statistics current.
  await vacuumMeasurements(sql);
  const { key } = await addKey(sql, { tubeIds: [ours.id] });
  return { tubeId: ours.id, identifier: ours.identifier, key };
}

/**
 * A year (366 days from SERIES_START) of every tube's data, one value every `step`, in one statement
 * ordered by time: the tubes' rows written interleaved, as loggers' imports of a network arrive.
 * `tubeIds`: the tubes to fill; every tube when not given.
 */
async function insertInterleaved(sql: Sql, step: string, tubeIds?: number[]): Promise<void> {
  const end = dayAfterStart(366);
  await insertMeasurements(
    sql,
    sql`select tube.id, t, round((sin(extract(epoch from t) / 86400 + tube.id) * 2)::numeric, 3)::float8
        from generate_series(${SERIES_START}::timestamptz, ${end}::timestamptz - ${step}::interval, ${step}::interval) as t
        cross join (select id from tubes ${tubeIds ? sql`where id = any(${tubeIds}::int[])` : sql``} order by id) as tube
        order by t, tube.id`,
  );
  await sql`select rollup_tube_measurements(id) from tubes ${tubeIds ? sql`where id = any(${tubeIds}::int[])` : sql``}`;
}

export interface NetworkFixture {
  /** The network's tubes in discovery's order (wells by name, tubes by number). */
  tubes: { id: number; identifier: string }[];
  /** A key that reads the network's tubes and nothing else. */
  key: string;
  /** Rows of the year, all tubes. */
  rows: number;
}

/**
 * A monitoring network: `wells` wells of `tubesPerWell` tubes, each with a year of data every
 * `stepMinutes` from SERIES_START, written interleaved in time (insertInterleaved) and vacuumed as an
 * import leaves it; and a key granted exactly these tubes. Other tubes in the database stay unread by it.
 */
export async function addNetworkFixture(
  sql: Sql,
  options: { wells: number; tubesPerWell: number; stepMinutes: number },
): Promise<NetworkFixture> {
  const tubes: { id: number; identifier: string }[] = [];
  for (let well = 1; well <= options.wells; well++) {
    const numbers = Array.from({ length: options.tubesPerWell }, (_, i) => ({ number: String(i + 1) }));
    tubes.push(...(await addWell(sql, `Network ${String(well).padStart(4, '0')}`, numbers)));
  }
  const ids = tubes.map((tube) => tube.id);
  await insertInterleaved(sql, `${options.stepMinutes} minutes`, ids);
  await vacuumMeasurements(sql);
  const { key } = await addKey(sql, { tubeIds: ids });
  const rows = tubes.length * ((366 * MINUTES_PER_DAY) / options.stepMinutes);
  return { tubes: tubes.map(({ id, identifier }) => ({ id, identifier })), key, rows };
}

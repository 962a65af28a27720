/**
 * The database of the formats, memory, network and client scenarios: the year-long series (one tube,
 * 1-minute data, 527,040 rows) and, beside it, a monitoring network
 * (NETWORK_WELLS × TUBES_PER_WELL tubes with a year of 15-minute data each, 35,136 rows per tube), each
 * with a key of its own; and the URLs of both endpoints over them.
 */
import { type Engine, startDatabaseServer } from '../../testkit/databaseServer.js';
import {
  addNetworkFixture,
  addSeriesFixture,
  dayAfterStart,
  MINUTES_PER_DAY,
  type NetworkFixture,
  SERIES_START,
  type SeriesFixture,
} from '../../testkit/seriesFixture.js';
import { asThePolicyLeavesIt } from './engines.js';

export const YEAR_ROWS = 366 * MINUTES_PER_DAY;
export const TUBES_PER_WELL = 4;
export const NETWORK_STEP_MINUTES = 15;
export const FORMATS = ['json', 'csv', 'arrow'] as const;
export type Format = (typeof FORMATS)[number];

export interface BenchDatabase {
  url: string;
  series: SeriesFixture;
  network: NetworkFixture;
  /** How long the fixtures took to write, s. */
  setupSeconds: number;
  engine: Engine;
  /** The server, and on TimescaleDB what the compression policy did. */
  description: string;
  stop(): Promise<void>;
}

/**
 * A fresh database with both fixtures: the long series first, then `wells` wells of the network; on
 * TimescaleDB, compressed as the policy leaves it (all of it: the year is 2024).
 */
export async function startNetworkDatabase(
  name: string,
  wells: number,
  engine: Engine = 'postgres',
): Promise<BenchDatabase> {
  const pg = await startDatabaseServer({}, engine);
  try {
    const { url, sql } = await pg.database(name);
    const started = performance.now();
    const series = await addSeriesFixture(sql);
    const network = await addNetworkFixture(sql, {
      wells,
      tubesPerWell: TUBES_PER_WELL,
      stepMinutes: NETWORK_STEP_MINUTES,
    });
    const description = await asThePolicyLeavesIt(pg, sql);
    const setupSeconds = (performance.now() - started) / 1000;
    return { url, series, network, setupSeconds, engine, description, stop: () => pg.stop() };
  } catch (error) {
    await pg.stop();
    throw error;
  }
}

const interval = (days: number) => `from=${SERIES_START}&to=${dayAfterStart(days)}`;

/** The year (or `days`) of one tube through the series endpoint. */
export const seriesUrl = (base: string, identifier: string, format: Format, days = 366) =>
  `${base}/v1/groundwater-monitoring-tubes/${identifier}/measurements?${interval(days)}&format=${format}`;

/** The year (or `days`) of every tube the key reads, through the network endpoint. */
export const networkUrl = (base: string, format: Format, days = 366) =>
  `${base}/v1/groundwater-monitoring-measurements?${interval(days)}&format=${format}`;

/** The two years a scenario reads: one tube's (the series) and every tube's of the network. */
export type Year = 'series' | 'network';

/** How many rows the year holds. */
export const yearRows = (db: BenchDatabase, year: Year) => (year === 'series' ? YEAR_ROWS : db.network.rows);

/** The year in `format` from the server at `base`. */
export const yearUrl = (db: BenchDatabase, base: string, year: Year, format: Format) =>
  year === 'series' ? seriesUrl(base, db.series.identifier, format) : networkUrl(base, format);

/** The key of the year's fixture. */
export const yearHeaders = (db: BenchDatabase, year: Year) => ({
  'x-api-key': year === 'series' ? db.series.key : db.network.key,
});

/** The formats to run: all three, or those in BENCH_FORMATS (e.g. `json,csv`). */
export function chosenFormats(): Format[] {
  const chosen = process.env.BENCH_FORMATS?.split(',') ?? [...FORMATS];
  const unknown = chosen.filter((format) => !FORMATS.includes(format as Format));
  if (unknown.length > 0) throw new Error(`BENCH_FORMATS: unknown ${unknown.join(', ')}`);
  return chosen as Format[];
}

/**
 * Seeds the demo network once: the registry through the same upsert as `gwapi import registry`, then a
 * year of 15-minute levels per tube through the measurements import, as `gwapi import measurements`
 * writes a CSV: so latest, the daily rollups, the change history (sync tokens) and the validators are
 * kept as for any import, and every endpoint answers on the demo as on imported data. The CSV is
 * generated as it is read, never held whole. Later runs find the data and reuse it.
 */
import type { Sql } from '../db/connect.js';
import { UserError } from '../errors.js';
import { HEADER_WITH_STATUS } from '../importers/measurements/csv/measurementCsv.js';
import { CHUNK_BYTES, type ImportInput } from '../importers/measurements/importInput.js';
import {
  changeLogMark,
  importMeasurements,
  vacuumMeasurements,
} from '../importers/measurements/measurements.js';
import { upsertRegistry } from '../importers/registry/registry.js';
import { createKey } from '../keys/store.js';
import { DEMO_TUBES, DEMO_WELLS, type DemoTube, demoRegistry, HIDDEN_DEMO_TUBE } from './wells.js';

export const DEMO_DAYS = 366;
export const DEMO_STEP_MINUTES = 15;
/** The last days of the series are provisional, the rest approved: as a network's checks lag behind. */
export const DEMO_PROVISIONAL_DAYS = 14;

export interface DemoData {
  /** Whether this call wrote the measurements (false: an earlier run had). */
  seeded: boolean;
  wells: number;
  tubes: number;
  measurements: number;
  /** The measured interval, from inclusive to exclusive (whole UTC days). */
  from: Date;
  to: Date;
}

const demoIdentifiers = () => DEMO_TUBES.map((tube) => tube.identifier);

/** Demo tubes that have no measurements yet (all of them on a first run, none after). */
async function unseededTubes(sql: Sql): Promise<DemoTube[]> {
  const seeded = await sql<{ identifier: string }[]>`
    select t.identifier::text from tubes t
    where t.identifier = any(${demoIdentifiers()}::uuid[])
      and exists (select from measurements m where m.tube_id = t.id)`;
  const found = new Set(seeded.map((row) => row.identifier));
  return DEMO_TUBES.filter((tube) => !found.has(tube.identifier));
}

/** The demo must not mix its wells into an operator's own data. */
async function refuseForeignWells(sql: Sql): Promise<void> {
  const foreign = await sql<{ name: string }[]>`
    select name from wells where name <> all(${DEMO_WELLS.map((well) => well.name)}::text[]) limit 1`;
  if (foreign.length > 0) {
    throw new UserError(
      `the database already holds wells of its own (such as ${JSON.stringify(foreign[0]!.name)}); ` +
        'the demo seeds only an empty database: point GWAPI_DATA_DIR at another folder, or unset DATABASE_URL',
    );
  }
}

/** End of the demo series: where an earlier run ended it, else the start of the current UTC day. */
async function seriesEnd(sql: Sql): Promise<Date> {
  const [row] = await sql<{ end: Date }[]>`
    select coalesce(
      date_trunc('day', max(last.observed_at)) + interval '1 day',
      date_trunc('day', now())
    ) as end
    from tubes t
    cross join lateral (
      select observed_at from measurements m where m.tube_id = t.id order by observed_at desc limit 1
    ) last
    where t.identifier = any(${demoIdentifiers()}::uuid[])`;
  return row!.end;
}

const STEP_MS = DEMO_STEP_MINUTES * 60_000;
const YEAR_SECONDS = 31_557_600;

/**
 * A seasonal sine (high on `highDay`, the epoch counted in years of 365.25 days), a small 17-day wobble
 * standing in for wet and dry spells, and ±4 mm of sensor noise, rounded to the millimetre. The noise is
 * a hash of the instant, so that a second reading of the input (measurements.ts) is the same file.
 */
function level(tube: DemoTube, time: number): number {
  const { mean, amplitude, highDay } = tube.level;
  const seconds = time / 1000;
  const noise = (Math.imul(time / STEP_MS, 0x9e3779b1) >>> 0) / 2 ** 32 - 0.5;
  const value =
    mean +
    amplitude * Math.cos(2 * Math.PI * (seconds / YEAR_SECONDS - (highDay - 1) / 365.25)) +
    amplitude * 0.15 * Math.sin((2 * Math.PI * seconds) / (17 * 86_400)) +
    noise * 0.008;
  return Math.round(value * 1000) / 1000;
}

/** The measurements CSV of `tubes` over the demo year ending at `end`, tube after tube, in chunks. */
async function* levelsCsv(tubes: readonly DemoTube[], end: Date): AsyncGenerator<Buffer> {
  const first = end.getTime() - DEMO_DAYS * 86_400_000;
  const approvedUntil = end.getTime() - DEMO_PROVISIONAL_DAYS * 86_400_000;
  let text = `${HEADER_WITH_STATUS}\n`;
  for (const tube of tubes) {
    for (let time = first; time < end.getTime(); time += STEP_MS) {
      const status = time < approvedUntil ? 'approved' : 'provisional';
      text += `${tube.identifier},${new Date(time).toISOString()},${level(tube, time)},${status}\n`;
      if (text.length >= CHUNK_BYTES) {
        yield Buffer.from(text);
        text = '';
      }
    }
  }
  yield Buffer.from(text);
}

/** The generated CSV as the import's input: read again from the start whenever the import asks. */
const levelsInput = (tubes: readonly DemoTube[], end: Date): ImportInput => ({
  read: () => levelsCsv(tubes, end),
  full: false,
  close: async () => {},
});

async function importLevels(sql: Sql, tubes: readonly DemoTube[], end: Date): Promise<void> {
  const since = await changeLogMark(sql);
  await importMeasurements(sql, levelsInput(tubes, end), { name: 'the demo levels' });
  // Series are read with index-only scans from the first request (measurements.ts).
  await vacuumMeasurements(sql, since);
}

async function countMeasurements(sql: Sql): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from measurements m join tubes t on t.id = m.tube_id
    where t.identifier = any(${demoIdentifiers()}::uuid[])`;
  return row!.count;
}

/** Seeds what is missing of the demo network and its measurements; cheap when all is there. */
export async function seedDemo(sql: Sql): Promise<DemoData> {
  const missing = await unseededTubes(sql);
  if (missing.length > 0) {
    await refuseForeignWells(sql);
    await upsertRegistry(sql, demoRegistry());
  }
  const to = await seriesEnd(sql);
  if (missing.length > 0) await importLevels(sql, missing, to);
  return {
    seeded: missing.length > 0,
    wells: DEMO_WELLS.length,
    tubes: DEMO_TUBES.length,
    measurements: await countMeasurements(sql),
    from: new Date(to.getTime() - DEMO_DAYS * 86_400_000),
    to,
  };
}

/** A new demo key: every demo tube but the hidden one. */
export const createDemoKey = (sql: Sql) =>
  createKey(sql, {
    name: 'demo',
    tubeIdentifiers: DEMO_TUBES.filter((tube) => tube !== HIDDEN_DEMO_TUBE).map((tube) => tube.identifier),
    allTubes: false,
  });

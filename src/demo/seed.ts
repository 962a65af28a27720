/**
 * Seeds the demo network once: the registry through the same upsert as `gwapi import registry`, then a
 * year of 15-minute levels per tube generated inside PostgreSQL (generate_series), which writes the
 * 200,000-odd rows in a few seconds without sending them over the wire. Later runs find the data and
 * reuse it.
 */
import type { Sql } from '../db/connect.js';
import { UserError } from '../errors.js';
import { upsertRegistry } from '../importers/registry/registry.js';
import { DEMO_TUBES, DEMO_WELLS, demoRegistry } from './wells.js';

export const DEMO_DAYS = 366;
export const DEMO_STEP_MINUTES = 15;

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
async function unseededTubeCount(sql: Sql): Promise<number> {
  const [row] = await sql<{ seeded: number }[]>`
    select count(*)::int as seeded from tubes t
    where t.identifier = any(${demoIdentifiers()}::uuid[])
      and exists (select from measurements m where m.tube_id = t.id)`;
  return DEMO_TUBES.length - row!.seeded;
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

/**
 * A seasonal sine (high on `highDay`, the epoch counted in years of 365.25 days), a small 17-day wobble
 * standing in for wet and dry spells, and ±4 mm of sensor noise, rounded to the millimetre.
 */
async function insertLevels(sql: Sql, end: Date): Promise<void> {
  const levels = DEMO_TUBES.map((tube) => tube.level);
  await sql`
    insert into measurements (tube_id, observed_at, value)
    select t.id, s.observed_at,
           round((p.mean
             + p.amplitude * cos(2 * pi() * (extract(epoch from s.observed_at) / 31557600 - (p.high_day - 1) / 365.25))
             + p.amplitude * 0.15 * sin(2 * pi() * extract(epoch from s.observed_at) / (17 * 86400))
             + (random() - 0.5) * 0.008)::numeric, 3)::float8
    from unnest(${demoIdentifiers()}::uuid[], ${levels.map((l) => l.mean)}::float8[],
                ${levels.map((l) => l.amplitude)}::float8[], ${levels.map((l) => l.highDay)}::float8[])
           as p(identifier, mean, amplitude, high_day)
    join tubes t on t.identifier = p.identifier
    cross join generate_series(
      ${end}::timestamptz - make_interval(days => ${DEMO_DAYS}),
      ${end}::timestamptz - make_interval(mins => ${DEMO_STEP_MINUTES}),
      make_interval(mins => ${DEMO_STEP_MINUTES})
    ) as s(observed_at)
    where not exists (select from measurements m where m.tube_id = t.id)`;
  // Written here rather than by an importer, so the daily rollups (sql/011) are computed here too.
  await sql`
    select rollup_tube_measurements(id) from tubes where identifier = any(${demoIdentifiers()}::uuid[])`;
  // Sets the visibility map, so series are read with index-only scans from the first request.
  await sql`vacuum (analyze) measurements`;
}

async function countMeasurements(sql: Sql): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from measurements m join tubes t on t.id = m.tube_id
    where t.identifier = any(${demoIdentifiers()}::uuid[])`;
  return row!.count;
}

/** Seeds what is missing of the demo network and its measurements; cheap when all is there. */
export async function seedDemo(sql: Sql): Promise<DemoData> {
  const missing = await unseededTubeCount(sql);
  if (missing > 0) {
    await refuseForeignWells(sql);
    await upsertRegistry(sql, demoRegistry());
  }
  const to = await seriesEnd(sql);
  if (missing > 0) await insertLevels(sql, to);
  return {
    seeded: missing > 0,
    wells: DEMO_WELLS.length,
    tubes: DEMO_TUBES.length,
    measurements: await countMeasurements(sql),
    from: new Date(to.getTime() - DEMO_DAYS * 86_400_000),
    to,
  };
}

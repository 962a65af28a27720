/** Wells, tubes, measurements and keys written straight into a test database. */
import { randomUUID } from 'node:crypto';
import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../src/db/connect.js';
import { storesThousandths } from '../src/db/valueStorage.js';
import { generateApiKey, generateKeyId, hashApiKey } from '../src/keys/format.js';
import { rememberKey } from './outputCapture.js';

export interface TubeSpec {
  number: string;
  identifier?: string;
  unit?: string;
  verticalDatum?: string;
}

export interface TubeFixture {
  id: number;
  identifier: string;
  number: string;
}

/** A well with its tubes; identifiers are random unless given. */
export async function addWell(sql: Sql, name: string, tubes: TubeSpec[]): Promise<TubeFixture[]> {
  const [well] = await sql<{ id: number }[]>`insert into wells (name) values (${name}) returning id`;
  const created: TubeFixture[] = [];
  for (const tube of tubes) {
    const identifier = (tube.identifier ?? randomUUID()).toLowerCase();
    const [row] = await sql<{ id: number }[]>`
      insert into tubes (identifier, well_id, number, unit, vertical_datum)
      values (${identifier}, ${well!.id}, ${tube.number}, ${tube.unit ?? 'm'}, ${tube.verticalDatum ?? 'NAP'})
      returning id`;
    created.push({ id: row!.id, identifier, number: tube.number });
  }
  return created;
}

/**
 * Computes the daily rollups of `tubeIds` from their measurements (sql/011), as the importers keep them:
 * for measurements a fixture or a test wrote itself.
 */
export async function rollUpDays(sql: Sql, tubeIds: readonly number[]): Promise<void> {
  // A previous release's schema (the migration drill's, until it migrates) has no rollups: 011 computes
  // them from the measurements when it is applied.
  const [schema] = await sql<{ rollups: boolean }[]>`
    select to_regprocedure('rollup_tube_measurements(integer)') is not null as rollups`;
  if (!schema?.rollups) return;
  await sql`select rollup_tube_measurements(tube) from unnest(${tubeIds as number[]}::int[]) as tube`;
}

/**
 * Inserts the rows `rows` selects (tube_id, observed_at, value, in that order) into measurements as the
 * writers store them: each value of at most three places as thousandths by sql/016's encoder where the
 * table takes them (a new install, or one finished by `gwapi migrate --finish`), else every value as its
 * double (a previous release's schema, as the migration drill's is until it migrates).
 */
export async function insertMeasurements(sql: Sql, rows: PendingQuery<Row[]>): Promise<void> {
  if (!(await storesThousandths(sql))) {
    await sql`insert into measurements (tube_id, observed_at, value) ${rows}`;
    return;
  }
  await sql`
    insert into measurements (tube_id, observed_at, value, value_thousandths)
    select tube_id, observed_at, case when stored.thousandths is null then given.value end, stored.thousandths
    from (${rows}) as given (tube_id, observed_at, value),
         lateral (select measurement_thousandths(given.value) as thousandths) as stored`;
}

/** Measurements as (RFC 3339 text, decimal text) pairs, stored exactly as the import would. */
export async function addMeasurements(sql: Sql, tubeId: number, rows: [string, string][]): Promise<void> {
  if (rows.length === 0) return;
  await insertMeasurements(
    sql,
    sql`select ${tubeId}::int4, t::timestamptz, v::float8
        from unnest(${rows.map((r) => r[0])}::text[], ${rows.map((r) => r[1])}::text[]) as x(t, v)`,
  );
  await rollUpDays(sql, [tubeId]);
}

/** A series generated in the database: one value every `step` from `from` (inclusive) to `to` (exclusive). */
export async function addRegularSeries(sql: Sql, tubeId: number, from: string, to: string, step: string) {
  await insertMeasurements(
    sql,
    sql`select ${tubeId}::int4, t, round((sin(extract(epoch from t) / 86400) * 2)::numeric, 3)::float8
        from generate_series(${from}::timestamptz, ${to}::timestamptz - interval '1 microsecond', ${step}::interval) as t`,
  );
  await rollUpDays(sql, [tubeId]);
}

/**
 * A well of `count` tubes numbered 1 to `count`, each with a series generated as addRegularSeries's (the
 * values shifted per tube), in one statement; vacuumed as an import leaves it.
 */
export async function addNetwork(
  sql: Sql,
  count: number,
  { from, to, step }: { from: string; to: string; step: string },
): Promise<TubeFixture[]> {
  const tubes = await addWell(
    sql,
    'Network',
    Array.from({ length: count }, (_, i) => ({ number: String(i + 1) })),
  );
  await insertMeasurements(
    sql,
    sql`select tube, t, round((sin(extract(epoch from t) / 86400 + tube) * 2)::numeric, 3)::float8
        from unnest(${tubes.map((tube) => tube.id)}::int[]) as tube,
             generate_series(${from}::timestamptz, ${to}::timestamptz - interval '1 microsecond', ${step}::interval) as t`,
  );
  await rollUpDays(
    sql,
    tubes.map((tube) => tube.id),
  );
  await sql`vacuum analyze measurements`;
  return tubes;
}

/**
 * One tube with a year (2024) of 1-minute data, vacuumed as an import leaves it, and a key that reads it;
 * `seriesPath` is the tube's measurements path without a query.
 */
export async function addYearTube(sql: Sql): Promise<{ tube: TubeFixture; key: string; seriesPath: string }> {
  const [tube] = await addWell(sql, 'Year', [{ number: '1' }]);
  await addRegularSeries(sql, tube!.id, '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '1 minute');
  await sql`vacuum analyze measurements`;
  const { key } = await addKey(sql, { tubeIds: [tube!.id] });
  return {
    tube: tube!,
    key,
    seriesPath: `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements`,
  };
}

export interface KeyFixture {
  key: string;
  keyId: string;
}

/** A live key reading the given tubes (internal ids), or every tube. */
export async function addKey(
  sql: Sql,
  options: { tubeIds?: number[]; allTubes?: boolean } = {},
): Promise<KeyFixture> {
  const key = generateApiKey();
  const keyId = generateKeyId();
  rememberKey(key);
  await sql`
    insert into api_keys (id, name, key_hash, all_tubes)
    values (${keyId}, ${`test ${keyId}`}, ${hashApiKey(key)}, ${options.allTubes ?? false})`;
  for (const tubeId of options.tubeIds ?? []) {
    await sql`insert into api_key_grants (key_id, tube_id) values (${keyId}, ${tubeId})`;
  }
  return { key, keyId };
}

export async function revokeKey(sql: Sql, keyId: string): Promise<void> {
  await sql`update api_keys set revoked_at = now() where id = ${keyId}`;
}

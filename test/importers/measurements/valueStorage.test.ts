/**
 * How the import stores a level (src/db/valueStorage.ts): on a new install a value of at most three
 * places as thousandths and any other as the double, on an upgraded database not yet finished every one
 * as the double; through both paths of the import (direct, then staging). A client reads the same bytes
 * from either store, in every format; and a re-import of the same levels writes nothing, whichever way
 * a row is stored (before and after `gwapi migrate --finish`).
 */
import { Readable } from 'node:stream';
import type { Test } from 'tap';
import t from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import { finishMigrations } from '../../../src/db/finish.js';
import { storesThousandths } from '../../../src/db/valueStorage.js';
import { measurementThousandths } from '../../../src/importers/measurements/copy/copyBinary.js';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { addKey } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { freshDatabase, type TestDatabase, upgradedDatabase } from '../../helpers/database.js';
import { get } from '../../helpers/http.js';
import { csvOf, OTHER, TUBE, TWO_TUBES } from '../../helpers/importFixtures.js';

/** Levels of every kind: millimetres, and what no three places hold (more places, beyond int4, -0). */
const VALUES = [
  '1.234',
  '-0.5',
  '0',
  '-0',
  '12',
  '0.0001',
  '-12.34567',
  '3000000.5',
  '-2147483.647',
  '0.671',
];

/** A day of TUBE every 10 minutes, its values VALUES in turn, shifted by `shift` thousandths. */
const day = (date: string, shift = 0) =>
  Array.from({ length: 144 }, (_, i) => {
    const at = new Date(Date.parse(`${date}T00:00:00Z`) + i * 600_000).toISOString();
    const value = VALUES[i % VALUES.length]!;
    const shifted =
      shift === 0 || i % 3 ? value : String(Number((Number(value) + shift / 1000).toPrecision(12)));
    return `${TUBE},${at},${shifted}`;
  });

const load = async (sql: Sql, lines: string[]) => {
  const r = await importMeasurements(sql, Readable.from([csvOf(lines)]), { name: 'data.csv' });
  return `${r.inserted} inserted, ${r.updated} updated, ${r.unchanged} unchanged`;
};

/** The second file: a third of the first day changed, and a day more. */
const again = (sql: Sql) => load(sql, [...day('2024-01-01', 7), ...day('2024-01-02')]);

/** A day through the direct path, then the second file through the staging path. */
const importBoth = async (sql: Sql) => [await load(sql, day('2024-01-01')), await again(sql)];

const OLD_ROW = `${OTHER},1990-01-01T00:00:00Z,1`;

async function storedForms(sql: Sql) {
  const rows = await sql<{ value: number | null; thousandths: number | null; decoded: number }[]>`
    select value, value_thousandths as thousandths, measurement_value(value, value_thousandths) as decoded
    from measurements m join tubes t on t.id = m.tube_id where t.identifier = ${TUBE} order by observed_at`;
  return rows;
}

const YEAR = 'from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';
const READS = [
  ['JSON', `?${YEAR}&include=status`, {}],
  ['CSV', `?${YEAR}&include=status&format=csv`, {}],
  ['Arrow', `?${YEAR}&include=status`, { accept: 'application/vnd.apache.arrow.stream' }],
  ['P1D', `?${YEAR}&aggregate=P1D`, {}],
  ['P1D as CSV', `?${YEAR}&aggregate=P1D&format=csv`, {}],
] as const;

/** Every read of TUBE a client makes, as bytes, and latest's. */
async function reads(t: Test, sql: Sql, db: TestDatabase) {
  const api = await startApi(t, { db });
  const { key } = await addKey(sql, { allTubes: true });
  const answers: Record<string, string> = {};
  for (const [name, query, headers] of READS) {
    const response = await get(api.base, `/v1/groundwater-monitoring-tubes/${TUBE}/measurements${query}`, {
      'x-api-key': key,
      ...headers,
    });
    t.equal(response.status, 200, name);
    answers[name] = (response.bytes ?? Buffer.from(response.body)).toString('base64');
  }
  const latest = await get(api.base, `/v1/groundwater-monitoring-measurements/latest?include=status`, {
    'x-api-key': key,
  });
  answers.latest = latest.body;
  return answers;
}

t.test(
  'a new install stores thousandths where they fit; a client reads what a double store gives',
  async (t) => {
    const finished = await freshDatabase(t);
    await upsertRegistry(finished.sql, TWO_TUBES);
    await load(finished.sql, [OLD_ROW]);
    t.equal(await storesThousandths(finished.sql), true, 'a new install is finished');
    const doubles = await upgradedDatabase(t, async (sql) => {
      await upsertRegistry(sql, TWO_TUBES);
      await load(sql, [OLD_ROW]);
    });
    t.equal(await storesThousandths(doubles.sql), false, 'an upgraded database is not');

    const outcomes = await importBoth(finished.sql);
    t.same(outcomes, ['144 inserted, 0 updated, 0 unchanged', '144 inserted, 48 updated, 96 unchanged']);
    t.same(await importBoth(doubles.sql), outcomes, 'the same outcome on the double store');

    const rows = await storedForms(finished.sql);
    const asDoubles = await storedForms(doubles.sql);
    t.same(
      rows.map((row) => (Object.is(row.decoded, -0) ? '-0' : String(row.decoded))),
      asDoubles.map((row) => (Object.is(row.decoded, -0) ? '-0' : String(row.decoded))),
      'the same values stored',
    );
    t.same(
      rows.filter(
        (row) => (row.thousandths === null) === (measurementThousandths(row.decoded) !== undefined),
      ),
      [],
      'thousandths exactly where they fit, the double elsewhere',
    );
    const kept = rows.filter((row) => row.thousandths === null).length;
    t.ok(kept > 0 && kept < rows.length, `${rows.length - kept} rows as thousandths, ${kept} as doubles`);
    t.same(
      asDoubles.filter((row) => row.thousandths !== null || row.value === null),
      [],
      'upgraded: doubles only',
    );

    const fromThousandths = await reads(t, finished.sql, finished);
    const fromDoubles = await reads(t, doubles.sql, doubles);
    for (const name of Object.keys(fromDoubles)) {
      t.equal(fromThousandths[name], fromDoubles[name], `${name}: the same bytes`);
    }

    const unchanged = '0 inserted, 0 updated, 288 unchanged';
    t.equal(await again(finished.sql), unchanged, 'again: every level unchanged');
    t.equal(await again(doubles.sql), unchanged);
    await finishMigrations(doubles.sql);
    t.same(
      (await storedForms(doubles.sql)).map((row) => [row.value, row.thousandths]),
      rows.map((row) => [row.value, row.thousandths]),
      'finished: stored as a new install stores them',
    );
    t.equal(await again(doubles.sql), unchanged, 'finished, again: every level unchanged');
    t.same(await reads(t, doubles.sql, doubles), fromDoubles, 'finished: every read the same bytes');
  },
);

/**
 * A value stored as thousandths reads back as the very double it was (sql/016, measurementValue.ts):
 * two databases hold the same rows, one every value as a double, the other each value of at most three
 * places as an integer of thousandths and only the rest as a double, written into the table directly,
 * with their change runs, latest and day rollups kept by the writers' functions. Every read path then
 * answers both with the same bytes, and the values are the ones written; on plain PostgreSQL, and on
 * native TimescaleDB with every chunk compressed.
 */
import { randomUUID } from 'node:crypto';
import { tableFromIPC } from 'apache-arrow';
import t, { type Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { addKey, addWell } from '../../testkit/fixtures.js';
import { startApi, type TestApi } from '../helpers/api.js';
import { arrowColumn, mismatches } from '../helpers/arrow.js';
import { freshDatabase, timescaleServerOrSkip } from '../helpers/database.js';
import { get } from '../helpers/http.js';
import { compressChunks } from '../helpers/timescale.js';

/** Values that are not a decimal of three places within int4's thousandths, or sit on its edges. */
const AWKWARD = [
  '0.6709999999999999',
  '-0',
  '0',
  '1e139',
  '-9.87654321e120',
  '3.14159265358979',
  '12.3456789012345',
  '0.0001',
  '5e-324',
  '2147483.647',
  '-2147483.647',
  '2147483.648',
  '-2147483.648',
  '-0.001',
  '0.1',
  '1234.5678',
];

/**
 * Tube 1's alone: too large for a mean (PostgreSQL's avg fails where its sums overflow, on either
 * store), so every aggregate below reads tube 0.
 */
const LARGE = ['1e300', '-1.7976931348623157e308', '1.5e200'];

const DAY_MS = 86_400_000;
const START = Date.parse('2024-03-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Row {
  tube: number;
  at: string;
  text: string;
}

/**
 * Hourly levels to the millimetre on `days` days from `firstDay` for tubes 0 and 1, and the awkward
 * values a minute apart from noon (tube 0) and 18:00 (tube 1) of the day `awkwardDay`, LARGE in tube 1.
 */
function rows(firstDay: number, days: number, awkwardDay: number): Row[] {
  const hourly = [0, 1].flatMap((tube) =>
    Array.from({ length: days * 24 }, (_, hour) => ({
      tube,
      at: iso(START + firstDay * DAY_MS + hour * 3_600_000),
      text: ((Math.round(Math.sin(hour / 7 + tube) * 2000) + 10_000 * tube) / 1000).toString(),
    })),
  );
  const awkward = [0, 1].flatMap((tube) =>
    [...AWKWARD, ...(tube === 1 ? LARGE : [])].map((text, i) => ({
      tube,
      at: iso(START + awkwardDay * DAY_MS + (12 + 6 * tube) * 3_600_000 + (i + 1) * 60_000),
      text,
    })),
  );
  return [...hourly, ...awkward];
}

/** Written before the token: three days; after it, a fourth. */
const BEFORE = rows(0, 3, 1);
const AFTER = rows(3, 1, 3);
const FROM = iso(START);
const TO = iso(START + 4 * DAY_MS);

type Form = 'double' | 'thousandths';

/**
 * Writes `rows` as one writer does, in one transaction: the measurements in `form`, a change run per
 * tube, and latest and the day rollups kept by the writers' functions.
 */
async function write(sql: Sql, tubeIds: number[], form: Form, written: Row[]): Promise<void> {
  const ids = written.map((row) => tubeIds[row.tube]!);
  await sql.begin(async (tx) => {
    await tx`
      insert into measurements (tube_id, observed_at, value, value_thousandths)
      select tube, at, case when ${form} = 'double' or measurement_thousandths(v) is null then v end,
             case when ${form} = 'thousandths' then measurement_thousandths(v) end
      from unnest(${ids}::int[], ${written.map((row) => row.at)}::timestamptz[],
                  ${written.map((row) => row.text)}::text[]) as x(tube, at, text),
           lateral (select text::float8 as v) as parsed`;
    await tx`
      insert into measurement_changes (tube_id, first_at, last_at)
      select tube, min(at), max(at)
      from unnest(${ids}::int[], ${written.map((row) => row.at)}::timestamptz[]) as x(tube, at)
      group by tube`;
    await tx`update tubes set series_version = series_version + 1 where id = any(${tubeIds}::int[])`;
    await tx`select refresh_latest_measurements(), refresh_measurement_day_rollups()`;
  });
}

interface Store {
  api: TestApi;
  headers: Record<string, string>;
  tubeIds: number[];
}

/** A database on `server` with the two tubes (the identifiers `tubes`) and BEFORE written in `form`. */
async function store(t: Test, server: string | undefined, form: Form, tubes: string[]): Promise<Store> {
  const db = await freshDatabase(t, { server });
  const api = await startApi(t, { db, env: { LIMITS_ENABLED: 'false' } });
  const added = await addWell(
    db.sql,
    'W',
    tubes.map((identifier, i) => ({ identifier, number: String(i + 1) })),
  );
  const tubeIds = added.map((tube) => tube.id);
  await write(db.sql, tubeIds, form, BEFORE);
  const { key } = await addKey(db.sql, { allTubes: true });
  return { api, headers: { 'X-API-Key': key }, tubeIds };
}

/**
 * A body as its bytes, what differs by server and not by store made the same: the sync token, and in
 * JSON this server's address in links and OGC's time of the response.
 */
async function body(s: Store, path: string): Promise<Buffer> {
  const response = await get(s.api.base, path, s.headers);
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.body}`);
  const token = response.headers['sync-token'];
  const bytes =
    typeof token === 'string'
      ? Buffer.from(response.bytes!.toString('latin1').replaceAll(token, 'TOKEN'), 'latin1')
      : response.bytes!;
  if (!String(response.headers['content-type']).includes('json')) return bytes;
  return Buffer.from(
    bytes
      .toString()
      .replaceAll(s.api.base, 'BASE')
      .replace(/"timeStamp":"[^"]*"/, '"timeStamp":"NOW"'),
  );
}

const interval = `from=${FROM}&to=${TO}`;

/** Every read path, by name: its path and query, for tube identifiers `tubes`. */
const readPaths = (tubes: string[]): Record<string, string> => {
  const series = `/v1/groundwater-monitoring-tubes/${tubes[0]}/measurements?${interval}`;
  const network = `/v1/groundwater-monitoring-measurements?${interval}`;
  return {
    'series, JSON': series,
    'series, JSON with status': `${series}&include=status`,
    'series, CSV': `${series}&format=csv`,
    'series, Arrow': `${series}&format=arrow`,
    'series, PT1H buckets': `${series}&aggregate=PT1H`,
    'series, PT15M buckets, Arrow': `${series}&aggregate=PT15M&format=arrow`,
    'series, P1D from the rollups': `${series}&aggregate=P1D`,
    'series, P1D from the rollups, one status': `${series}&aggregate=P1D&status=approved`,
    'network, JSON': network,
    'network, CSV': `${network}&format=csv`,
    'network, Arrow': `${network}&format=arrow`,
    'network, PT1H buckets': `${network}&aggregate=PT1H&tubes=${tubes[0]}`,
    latest: '/v1/groundwater-monitoring-measurements/latest',
    'OGC measurements': '/v1/ogc/collections/measurements/items?limit=10000',
    'OGC latest': '/v1/ogc/collections/latest/items',
  };
};

async function sameOnBoth(t: Test, server: string | undefined, compress: boolean) {
  const tubes = [randomUUID(), randomUUID()];
  const doubles = await store(t, server, 'double', tubes);
  const thousandths = await store(t, server, 'thousandths', tubes);
  const compressAll = async () => {
    if (!compress) return;
    for (const s of [doubles, thousandths]) {
      const { uncompressed, compressed } = await compressChunks(s.api.db.sql);
      t.equal(uncompressed, 0, 'every chunk compressed');
      t.ok(compressed > 0);
    }
  };
  await compressAll();

  const stored = async (s: Store) =>
    (
      await s.api.db.sql<{ integers: number; doubles: number }[]>`
        select count(value_thousandths)::int as integers, count(value)::int as doubles from measurements`
    )[0]!;
  const notThousandths = (text: string) => {
    const v = Number(text);
    return Object.is(v, -0) || Math.abs(v) > 2147483.647 || Math.round(v * 1000) / 1000 !== v;
  };
  const awkwardDoubles = [...AWKWARD, ...AWKWARD, ...LARGE].filter(notThousandths).length;
  t.same(await stored(doubles), { integers: 0, doubles: BEFORE.length }, 'one store holds doubles alone');
  t.same(
    await stored(thousandths),
    { integers: BEFORE.length - awkwardDoubles, doubles: awkwardDoubles },
    'the other holds thousandths, and the values that do not fit as doubles',
  );

  const [differ] = await thousandths.api.db.sql<{ count: number }[]>`
    select count(*)::int as count
    from unnest(${BEFORE.map((row) => thousandths.tubeIds[row.tube]!)}::int[],
                ${BEFORE.map((row) => row.at)}::timestamptz[], ${BEFORE.map((row) => row.text)}::text[])
           as x(tube, at, text)
    left join measurements m on m.tube_id = x.tube and m.observed_at = x.at
    where float8send(measurement_value(m.value, m.value_thousandths)) is distinct from float8send(x.text::float8)`;
  t.equal(differ?.count, 0, 'measurement_value gives back every double written, bit for bit (-0 too)');

  const paths = readPaths(tubes);
  for (const [name, path] of Object.entries(paths)) {
    t.same(await body(thousandths, path), await body(doubles, path), name);
  }
  const written = BEFORE.filter((row) => row.tube === 0).sort((a, b) => a.at.localeCompare(b.at));
  const arrow = tableFromIPC(await body(thousandths, paths['series, Arrow']!));
  t.equal(
    mismatches(
      arrowColumn(arrow, 'value'),
      // -0 read as 0, as every format writes it (binaryCopy.ts).
      written.map((row) => Number(row.text) + 0),
    ),
    0,
    'the series holds the doubles written, bit for bit',
  );
  t.equal(arrow.numRows, written.length);

  // A delta: what a second writer wrote after each store's token, raw and in buckets.
  const network = `/v1/groundwater-monitoring-measurements?${interval}`;
  const tokens = await Promise.all(
    [doubles, thousandths].map(
      async (s) => (await get(s.api.base, network, s.headers)).headers['sync-token'] as string,
    ),
  );
  await write(doubles.api.db.sql, doubles.tubeIds, 'double', AFTER);
  await write(thousandths.api.db.sql, thousandths.tubeIds, 'thousandths', AFTER);
  await compressAll();
  for (const [name, extra] of [
    ['delta', ''],
    ['delta, CSV with status', '&format=csv&include=status'],
    ['delta, PT1H buckets', `&aggregate=PT1H&tubes=${tubes[0]}`],
  ] as [string, string][]) {
    const fromDoubles = await body(doubles, `${network}${extra}&changedSince=${tokens[0]}`);
    const fromThousandths = await body(thousandths, `${network}${extra}&changedSince=${tokens[1]}`);
    t.same(fromThousandths, fromDoubles, name);
    if (name === 'delta') {
      const series = (JSON.parse(fromThousandths.toString()) as { series: { measurements: unknown[] }[] })
        .series;
      t.equal(
        series.reduce((sum, s) => sum + s.measurements.length, 0),
        AFTER.length,
        'the delta holds every row written after the token',
      );
    }
  }
  for (const name of ['latest', 'series, P1D from the rollups', 'OGC latest']) {
    t.same(
      await body(thousandths, paths[name]!),
      await body(doubles, paths[name]!),
      `${name}, after the delta`,
    );
  }
}

t.test('plain PostgreSQL', (t) => sameOnBoth(t, undefined, false));

t.test('native TimescaleDB, every chunk compressed', async (t) => {
  const server = timescaleServerOrSkip(t);
  if (server) await sameOnBoth(t, server, true);
});

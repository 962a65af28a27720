/**
 * Latest against discovery of the same key: the latest measurement of each of 3,000 tubes (1,000 wells
 * × 3) in a store of 10 million rows, over real HTTP, against discovery's JSON of the same key (served
 * from its cache), limits lifted; and beside them, on the database alone, the select latest runs (of
 * latest_measurements, which the writers keep) against the naive one, "order by observed_at desc
 * limit 1" per tube on measurements. With and without a status filter (`approved`, whose latest lies
 * some 270 rows back in each tube: the rows of the last month are provisional).
 *
 * On each engine of BENCH_ENGINE (lib/engines.ts): on TimescaleDB the store (2024) is compressed as the
 * policy leaves it. latest_measurements is filled as the migration's backfill fills it (rows written by
 * SQL, not by the importer). With both engines, the requests of every engine run in the same rounds and
 * a last table gives each on TimescaleDB over the same on PostgreSQL (goal: ≤ 1.3×).
 *
 *   npm run bench -- latest [ROUNDS] [REQUESTS] [ROWS_PER_TUBE]        (5, 40, 3,334; BENCH_ENGINE)
 */
import type { Sql } from '../../src/db/connect.js';
import { latestSelect } from '../../src/v1/latest/sql.js';
import { numberArguments } from '../../testkit/arguments.js';
import { addKey } from '../../testkit/fixtures.js';
import { count, loadLine, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import { onEachEngine, printEngineRatios, requireEnginePrerequisites } from '../lib/engines.js';
import { timedGet } from '../lib/http.js';

requireEnginePrerequisites();

const [ROUNDS, REQUESTS, ROWS_PER_TUBE] = numberArguments(5, 40, 3334);
/** Issue 36's goal for latest on TimescaleDB over the same on PostgreSQL. */
const ENGINE_BOUND = 1.3;
const WELLS = 1000;
const TUBES_PER_WELL = 3;
const TUBES = WELLS * TUBES_PER_WELL;
/** Every row of 2024 at equal steps; the last month's provisional, the rest approved. */
const YEAR = { from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' };
const PROVISIONAL_FROM = '2024-12-01T00:00:00Z';

/** The registry (wells with locations), `rowsPerTube` rows of each tube, latest_measurements, a key. */
async function addStore(sql: Sql, rowsPerTube: number): Promise<string> {
  await sql`
    with w as (
      insert into wells (name, longitude, latitude)
      select 'Well ' || i, 3.3 + (i % 100) * 0.037, 50.7 + (i / 100) * 0.09 from generate_series(1, ${WELLS}) i
      returning id
    )
    insert into tubes (identifier, well_id, number)
    select gen_random_uuid(), w.id, n::text from w, generate_series(1, ${TUBES_PER_WELL}) n`;
  const stepSeconds = Math.floor((366 * 86_400) / rowsPerTube);
  // Tube by tube in slices: one statement of 10 million rows would hold them all in one transaction's WAL.
  const ids = (await sql<{ id: number }[]>`select id from tubes order by id`).map((row) => row.id);
  for (let at = 0; at < ids.length; at += 100) {
    await sql`
      insert into measurements (tube_id, observed_at, value, status)
      select t, o, round((sin(extract(epoch from o) / 86400 + t) * 2)::numeric, 3)::float8,
             case when o >= ${PROVISIONAL_FROM}::timestamptz then 1 else 0 end
      from unnest(${ids.slice(at, at + 100)}::int[]) t,
           generate_series(${YEAR.from}::timestamptz, ${YEAR.to}::timestamptz - interval '1 second',
                           make_interval(secs => ${stepSeconds})) o`;
  }
  await sql`
    insert into latest_measurements (tube_id, status, observed_at, value)
    select distinct on (tube_id, status) tube_id, status, observed_at, value
    from measurements order by tube_id, status, observed_at desc`;
  return (await addKey(sql, { allTubes: true })).key;
}

/** The naive select: each tube's measurements searched backwards, the first that passes. */
const naiveSelect = (status: string) => `
  select listed.position, m.observed_at, m.value
  from unnest(array(select id from tubes order by id)) with ordinality as listed(id, position)
  cross join lateral (
    select observed_at, value from measurements
    where tube_id = listed.id ${status === 'approved' ? 'and status = 0' : ''}
    order by observed_at desc limit 1
  ) m`;

/** The select latest runs (src/v1/latest/sql.ts), over latest_measurements. */
const keptSelect = (status: string, ids: number[]) =>
  latestSelect(ids, status === 'approved' ? [0] : undefined, false);

const STATUSES = ['every status', 'approved'];

/** Medians over rounds of each select's time on `sql`, client-side. */
async function timeSelects(sql: Sql, rounds: number) {
  const ids = (await sql<{ id: number }[]>`select id from tubes order by id`).map((row) => row.id);
  const times = new Map<string, number[]>();
  for (let round = -1; round < rounds; round++) {
    for (const status of STATUSES) {
      for (const [kind, select] of [
        ['latest_measurements', keptSelect(status, ids)],
        ['naive', naiveSelect(status)],
      ] as const) {
        const started = performance.now();
        const rows = await sql.unsafe(select);
        const took = performance.now() - started;
        if (rows.length !== TUBES) throw new Error(`${kind}, ${status}: ${rows.length} rows`);
        if (round >= 0) times.set(`${kind}|${status}`, [...(times.get(`${kind}|${status}`) ?? []), took]);
      }
    }
  }
  return (kind: string, status: string) => median(times.get(`${kind}|${status}`)!);
}

/** A box around every well, a little larger each time: a request no kept document answers. */
let boxes = 0;
const newBox = () => `bbox=-${10 + ++boxes / 1e6},40,20,60`;
const LATEST = '/v1/groundwater-monitoring-measurements/latest';
const DISCOVERY = '/v1/groundwater-monitoring-wells';

/**
 * Medians over rounds of REQUESTS sequential requests of discovery and of latest, alternating, on every
 * engine in the same rounds. Asked again, a latest document is kept (its state unchanged); the new-box
 * target reads it every time, as the first request after an import does.
 */
async function timeRequests(services: Service[]) {
  // Each latest beside discovery in the same kind of body: GeoJSON beside GeoJSON, the rest beside JSON.
  const targets: [string, (base: string) => string, string][] = [
    ['discovery (JSON)', (base) => `${base}${DISCOVERY}`, 'discovery (JSON)'],
    ['discovery (GeoJSON)', (base) => `${base}${DISCOVERY}?format=geojson`, 'discovery (GeoJSON)'],
    ['latest (JSON)', (base) => `${base}${LATEST}`, 'discovery (JSON)'],
    ['latest, status=approved', (base) => `${base}${LATEST}?status=approved`, 'discovery (JSON)'],
    ['latest (Arrow)', (base) => `${base}${LATEST}?format=arrow`, 'discovery (JSON)'],
    ['latest (GeoJSON)', (base) => `${base}${LATEST}?format=geojson`, 'discovery (GeoJSON)'],
    ['latest (JSON), not kept', (base) => `${base}${LATEST}?${newBox()}`, 'discovery (JSON)'],
  ];
  for (const { engineName, base, key, bytes } of services) {
    for (const [name, url] of targets) {
      const first = await timedGet(url(base), { 'x-api-key': key }, true);
      if (first.status !== 200) throw new Error(`${engineName}, ${name}: ${first.status}`);
      if (name.startsWith('latest (JSON)') && JSON.parse(first.body!.toString()).length !== TUBES)
        throw new Error(`${name}: not one row per tube`);
      bytes.set(name, first.bytes);
    }
  }
  for (let round = -1; round < ROUNDS; round++) {
    for (let i = 0; i < REQUESTS; i++) {
      for (const { base, key, times, bytes } of (round + i) % 2 === 0 ? services : [...services].reverse()) {
        const order = (round + i) % 2 === 0 ? targets : [...targets].reverse();
        for (const [name, url] of order) {
          const timed = await timedGet(url(base), { 'x-api-key': key });
          if (timed.bytes !== bytes.get(name)) throw new Error(`${name}: ${timed.bytes} bytes`);
          if (round >= 0) times.set(name, [...(times.get(name) ?? []), timed.totalMs]);
        }
      }
    }
  }
  for (const { engineName, times, bytes } of services) {
    console.log(`${engineName}\n`);
    printTable(
      ['request', 'median', 'body', 'vs discovery (bound ≤ 2×)', 'discovery'],
      targets.map(([name, , against]) => {
        const m = median(times.get(name)!);
        return [name, ms(m), `${count(bytes.get(name)!)} B`, ratio(m / median(times.get(against)!)), against];
      }),
    );
  }
  printEngineRatios(
    'TimescaleDB over PostgreSQL, requests',
    services,
    targets.map(([name]) => ({
      name,
      samplesOf: ({ times }) => times.get(name)!,
      ...(name.startsWith('latest') ? { bound: ENGINE_BOUND } : {}),
    })),
    ms,
  );
}

function printSelects(median: (kind: string, status: string) => number) {
  printTable(
    ['select of 3,000 tubes', 'latest_measurements', 'naive (measurements)', 'naive / latest'],
    STATUSES.map((status) => [
      status,
      ms(median('latest_measurements', status)),
      ms(median('naive', status)),
      ratio(median('naive', status) / median('latest_measurements', status)),
    ]),
  );
}

console.log(`Latest — ${await machineLine()}\n`);

const { parts: services, stop } = await onEachEngine(
  'bench_latest',
  async ({ sql, asThePolicyLeavesIt, startApi }) => {
    const started = performance.now();
    const key = await addStore(sql, ROWS_PER_TUBE);
    await sql`vacuum analyze`;
    const server = await asThePolicyLeavesIt();
    const [{ rows }] = (await sql`select count(*)::int8 as rows from measurements`) as [{ rows: string }];
    console.log(
      `${server}\n${count(TUBES)} tubes, ${count(Number(rows))} rows ` +
        `(written in ${((performance.now() - started) / 1000).toFixed(0)} s); ${ROUNDS} rounds of ${REQUESTS} requests each\n`,
    );
    printSelects(await timeSelects(sql, ROUNDS));
    const api = await startApi();
    /** Each target's times, one per request, and its body's bytes. */
    return { base: api.base, key, times: new Map<string, number[]>(), bytes: new Map<string, number>() };
  },
);
type Service = (typeof services)[number];
try {
  console.log(`${await loadLine()}\n`);
  await timeRequests(services);
  console.log(`${await loadLine()} at the end`);
} finally {
  await stop();
}

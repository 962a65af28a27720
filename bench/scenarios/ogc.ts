/**
 * OGC API - Features (/v1/ogc) against the endpoints that serve the same data, over real HTTP, limits
 * lifted, in the same rounds, alternating:
 * - page 100 of `measurements` (reached as a client reaches it: 99 `next` links followed) against page 1,
 *   the default limit, across the network's tubes and inside the series' one tube: keyset paging makes
 *   them cost alike (bound ≤ 1.2×);
 * - a page of 50,000 measurements of one tube (`tubeIdentifier`, `limit=50000`) against the same 50,000
 *   rows from the series endpoint as JSON (bound ≤ 1.5×);
 * - `tubes` and `latest` pages of 3,000 features (1,000 wells × 3 tubes with locations and elevations, a
 *   key of their own) against discovery's GeoJSON of the same key (served from its cache; bound ≤ 2×).
 *
 * The measurements are the series (one tube, a year of 1-minute data) and a network of WELLS × 4 tubes
 * (a year of 15-minute data each) of the formats scenario, on each engine of BENCH_ENGINE
 * (lib/engines.ts); with both, a last table gives each request on TimescaleDB over PostgreSQL.
 *
 *   npm run bench -- ogc [ROUNDS] [REQUESTS] [WELLS]        (5, 10, 10; BENCH_ENGINE)
 */
import type { Sql } from '../../src/db/connect.js';
import { numberArguments } from '../../testkit/arguments.js';
import { addKey } from '../../testkit/fixtures.js';
import { count, loadLine, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import {
  addNetworkFixture,
  addSeriesFixture,
  MINUTES_PER_DAY,
  SERIES_START,
} from '../../testkit/seriesFixture.js';
import { rowCounter } from '../lib/bodyRows.js';
import { type Engine, onEachEngine, printEngineRatios, requireEnginePrerequisites } from '../lib/engines.js';
import { timedGet } from '../lib/http.js';
import { NETWORK_STEP_MINUTES, TUBES_PER_WELL } from '../lib/networkFixture.js';
import type { ServerProcess } from '../lib/serverProcess.js';

requireEnginePrerequisites();

const [ROUNDS, REQUESTS, WELLS] = numberArguments(5, 10, 10);
const PAGE = 100;
const BIG_PAGE = 50_000;
const REGISTRY_WELLS = 1000;
const REGISTRY_TUBES = REGISTRY_WELLS * 3;

const OGC = '/v1/ogc/collections';
const DISCOVERY = '/v1/groundwater-monitoring-wells';

/** 1,000 wells × 3 tubes with locations and elevations, each with one latest measurement; a key for exactly them. */
async function addRegistry(sql: Sql): Promise<string> {
  const tubes = await sql<{ id: number }[]>`
    with w as (
      insert into wells (name, longitude, latitude)
      select 'Registry ' || i, 3.3 + (i % 100) * 0.037, 50.7 + (i / 100) * 0.09
      from generate_series(1, ${REGISTRY_WELLS}) i
      returning id
    )
    insert into tubes (identifier, well_id, number, ground_level, tube_top, screen_top, screen_bottom)
    select gen_random_uuid(), w.id, n::text, 1.25, 1.75, -4.5 * n, -6.5 * n from w, generate_series(1, 3) n
    returning id`;
  const ids = tubes.map((tube) => tube.id);
  await sql`
    insert into measurements (tube_id, observed_at, value)
    select t, '2024-06-01T00:00:00Z'::timestamptz + make_interval(mins => t % 1440), t % 7
    from unnest(${ids}::int[]) t`;
  // As the migration's backfill fills it (rows written by SQL, not by the importer).
  await sql`
    insert into latest_measurements (tube_id, status, observed_at, value)
    select distinct on (tube_id, status) tube_id, status, observed_at, value
    from measurements where tube_id = any(${ids}::int[]) order by tube_id, status, observed_at desc`;
  await sql`select rollup_tube_measurements(t) from unnest(${ids}::int[]) t`;
  return (await addKey(sql, { tubeIds: ids })).key;
}

interface Target {
  name: string;
  url: string;
  key: string;
  /** Bytes of its body, checked on every request. */
  bytes: number;
}

interface Service {
  engine: Engine;
  engineName: string;
  api: ServerProcess;
  targets: Map<string, Target>;
}

/** The body of `url`, which must be a 200. */
async function fetched(url: string, key: string) {
  const response = await timedGet(url, { 'x-api-key': key }, true);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${response.body}`);
  return { bytes: response.bytes, text: response.body!.toString() };
}

interface Page {
  features: { id: string }[];
  numberReturned: number;
  links: { rel: string; href: string }[];
}

const nextOf = (page: Page) => page.links.find((link) => link.rel === 'next')?.href;

/** The targets of one engine's server, each body checked once before anything is timed. */
async function targetsOf(
  base: string,
  keys: { network: string; series: string; registry: string },
  seriesTube: string,
): Promise<Map<string, Target>> {
  const targets = new Map<string, Target>();
  const add = (name: string, url: string, key: string, bytes: number) =>
    targets.set(name, { name, url, key, bytes });

  // Page 1, then page 100 as a client reaches it: by following each page's next link. Across the
  // network's tubes, and inside the series' one tube (page 100 starts 99,000 rows into it).
  const pages = [
    ['measurements', `${base}${OGC}/measurements/items`, keys.network],
    [
      'measurements of one tube',
      `${base}${OGC}/measurements/items?tubeIdentifier=${seriesTube}`,
      keys.series,
    ],
  ] as const;
  for (const [name, first, key] of pages) {
    let url: string = first;
    for (let page = 1; page <= PAGE; page++) {
      const { bytes, text } = await fetched(url, key);
      const body = JSON.parse(text) as Page;
      if (body.numberReturned !== 1000) throw new Error(`${name}, page ${page}: ${body.numberReturned}`);
      if (page === 1) add(`${name}, page 1`, url, key, bytes);
      if (page === PAGE) add(`${name}, page ${PAGE}`, url, key, bytes);
      else url = nextOf(body) ?? '';
      if (url === '') throw new Error(`${name}, page ${page}: no next link`);
    }
  }

  // A page of 50,000 of one tube, and the same rows from the series: its first 50,000 minutes.
  const big = `${base}${OGC}/measurements/items?tubeIdentifier=${seriesTube}&limit=${BIG_PAGE}`;
  const bigPage = await fetched(big, keys.series);
  const parsed = JSON.parse(bigPage.text) as Page;
  const until = new Date(Date.parse(SERIES_START) + BIG_PAGE * 60_000).toISOString().replace('.000Z', 'Z');
  const lastMinute = new Date(Date.parse(until) - 60_000).toISOString().replace('.000Z', 'Z');
  if (parsed.numberReturned !== BIG_PAGE || parsed.features.at(-1)?.id !== `${seriesTube}:${lastMinute}`)
    throw new Error(`the page of ${BIG_PAGE}: ${parsed.numberReturned}, last ${parsed.features.at(-1)?.id}`);
  add(`measurements, a page of ${count(BIG_PAGE)}`, big, keys.series, bigPage.bytes);
  const series = `${base}/v1/groundwater-monitoring-tubes/${seriesTube}/measurements?from=${SERIES_START}&to=${until}&format=json`;
  const seriesBody = await fetched(series, keys.series);
  const rows = rowCounter('json');
  rows.onChunk(Buffer.from(seriesBody.text));
  if (rows.done().rows !== BIG_PAGE) throw new Error(`the series: ${rows.done().rows} rows`);
  add(`the series, ${count(BIG_PAGE)} rows (JSON)`, series, keys.series, seriesBody.bytes);

  // Tubes and latest of 3,000 in one page each, against discovery's GeoJSON of the same key.
  for (const collection of ['tubes', 'latest']) {
    const page = `${base}${OGC}/${collection}/items?limit=${REGISTRY_TUBES}`;
    const body = await fetched(page, keys.registry);
    const features = (JSON.parse(body.text) as Page).numberReturned;
    if (features !== REGISTRY_TUBES) throw new Error(`${collection}: ${features} features`);
    add(`${collection}, a page of ${count(REGISTRY_TUBES)}`, page, keys.registry, body.bytes);
  }
  const discovery = `${base}${DISCOVERY}?format=geojson`;
  add('discovery (GeoJSON)', discovery, keys.registry, (await fetched(discovery, keys.registry)).bytes);
  return targets;
}

/** Each figure, its floor, its bound. */
const FIGURES: [string, string, number][] = [
  [`measurements, page ${PAGE}`, 'measurements, page 1', 1.2],
  [`measurements of one tube, page ${PAGE}`, 'measurements of one tube, page 1', 1.2],
  [`measurements, a page of ${count(BIG_PAGE)}`, `the series, ${count(BIG_PAGE)} rows (JSON)`, 1.5],
  [`tubes, a page of ${count(REGISTRY_TUBES)}`, 'discovery (GeoJSON)', 2],
  [`latest, a page of ${count(REGISTRY_TUBES)}`, 'discovery (GeoJSON)', 2],
];
/** The targets asked REQUESTS times a round; the pages of 50,000 rows once. */
const heavy = (name: string) => name.includes(count(BIG_PAGE));

async function timeRequests(services: Service[]) {
  const times = new Map<string, number[]>();
  const cpu = new Map<string, number>();
  const asked = new Map<string, number>();
  const keyOf = (engine: Engine, name: string) => `${engine}|${name}`;
  for (let round = -1; round < ROUNDS; round++) {
    for (let i = 0; i < REQUESTS; i++) {
      for (const { engine, api, targets } of (round + i) % 2 === 0 ? services : [...services].reverse()) {
        const all = [...targets.values()].filter(({ name }) => i === 0 || !heavy(name));
        for (const target of (round + i) % 2 === 0 ? all : all.reverse()) {
          const cpuBefore = api.cpuMs();
          const timed = await timedGet(target.url, { 'x-api-key': target.key });
          if (timed.status !== 200 || timed.bytes !== target.bytes)
            throw new Error(`${target.name}: ${timed.status}, ${timed.bytes} bytes`);
          if (round >= 0) {
            const at = keyOf(engine, target.name);
            times.set(at, [...(times.get(at) ?? []), timed.totalMs]);
            // /proc's 10 ms ticks: summed over every request of the target, then averaged.
            cpu.set(at, (cpu.get(at) ?? 0) + api.cpuMs() - cpuBefore);
            asked.set(at, (asked.get(at) ?? 0) + 1);
          }
        }
      }
    }
  }
  // Per-round medians, so that a round's ratio compares requests of the same moment.
  const perRound = (engine: Engine, name: string) => {
    const samples = times.get(keyOf(engine, name))!;
    const each = samples.length / ROUNDS;
    return Array.from({ length: ROUNDS }, (_, round) =>
      median(samples.slice(round * each, (round + 1) * each)),
    );
  };
  for (const { engine, engineName, targets } of services) {
    console.log(`${engineName}\n`);
    printTable(
      ['request', 'median', 'body', 'server CPU, mean', 'server CPU a MB'],
      [...targets.values()].map(({ name, bytes }) => {
        const mean = cpu.get(keyOf(engine, name))! / asked.get(keyOf(engine, name))!;
        return [
          name,
          ms(median(perRound(engine, name))),
          `${count(bytes)} B`,
          ms(mean),
          ms(mean / (bytes / 1e6)),
        ];
      }),
    );
    printTable(
      ['figure', 'floor', 'ratio of medians', 'rounds', 'bound', 'met'],
      FIGURES.map(([figure, floor, bound]) => {
        const ratios = perRound(engine, figure).map(
          (value, round) => value / perRound(engine, floor)[round]!,
        );
        const medians = median(perRound(engine, figure)) / median(perRound(engine, floor));
        return [
          figure,
          floor,
          ratio(medians),
          `${ratio(Math.min(...ratios))} – ${ratio(Math.max(...ratios))}`,
          `≤ ${ratio(bound)}`,
          medians <= bound ? 'yes' : 'NO',
        ];
      }),
    );
  }
  printEngineRatios(
    'TimescaleDB over PostgreSQL, requests',
    services,
    [...services[0]!.targets.keys()].map((name) => ({
      name,
      samplesOf: ({ engine }) => perRound(engine, name),
    })),
    ms,
  );
}

console.log(`OGC API - Features — ${await machineLine()}\n`);

const { parts: services, stop } = await onEachEngine(
  'bench_ogc',
  async ({ sql, asThePolicyLeavesIt, startApi }) => {
    const started = performance.now();
    const series = await addSeriesFixture(sql);
    const network = await addNetworkFixture(sql, {
      wells: WELLS,
      tubesPerWell: TUBES_PER_WELL,
      stepMinutes: NETWORK_STEP_MINUTES,
    });
    const registry = await addRegistry(sql);
    await sql`vacuum analyze`;
    const server = await asThePolicyLeavesIt();
    console.log(
      `${server}\nseries: 1 tube × ${count(366 * MINUTES_PER_DAY)} ` +
        `rows; network: ${count(network.tubes.length)} tubes, ${count(network.rows)} rows; registry: ` +
        `${count(REGISTRY_TUBES)} tubes (written in ${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
    );
    const api = await startApi();
    const keys = { network: network.key, series: series.key, registry };
    return { api, targets: await targetsOf(api.base, keys, series.identifier) };
  },
);
try {
  console.log(
    `${ROUNDS} rounds of ${REQUESTS} requests of each (the pages of ${count(BIG_PAGE)} rows: one a round); ` +
      `${await loadLine()}\n`,
  );
  await timeRequests(services);
  console.log(`${await loadLine()} at the end`);
} finally {
  await stop();
}

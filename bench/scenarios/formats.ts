/**
 * Formats: a year as JSON, CSV and Arrow, for one tube (the series endpoint: 527,040 rows of 1-minute
 * data) and for a network (the network endpoint: WELLS × 4 tubes of 15-minute data, 35,136 rows each),
 * over real HTTP on loopback, each divided by its floor: PostgreSQL's own `COPY (the same select) TO
 * STDOUT` of the same rows, streamed into the server process (lib/floor.ts). Also the endpoints' row
 * source alone (binary COPY, decoded), so that what a format adds above it shows.
 *
 * On each engine of BENCH_ENGINE (lib/engines.ts): on TimescaleDB the year (2024) lies in chunks the
 * compression policy compressed, and with both engines a last table gives each figure on TimescaleDB
 * over the same on PostgreSQL (goal: a year in every format ≤ 1.2×).
 *
 * Each round runs every variant on every engine once, one after the other, so drift of a shared machine
 * hits all of them alike; the table gives the median of the rounds and the range of the per-round ratios.
 * The server's CPU over the floor's (Node receiving the COPY's bytes) drifts less than the wall clock on a
 * busy machine.
 *
 *   npm run bench -- formats [ROUNDS] [WELLS]     (defaults 5 rounds, 50 wells = 200 tubes)
 *   (DATABASE_URL, or an embedded PostgreSQL; BENCH_ENGINE)
 */
import { numberArguments } from '../../testkit/arguments.js';
import { count, loadLine, machineLine, mb, median, ms, printTable, ratio } from '../../testkit/report.js';
import { dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import { rowCounter } from '../lib/bodyRows.js';
import {
  benchEngines,
  ENGINE_NAMES,
  type Engine,
  printEngineRatios,
  requireEnginePrerequisites,
} from '../lib/engines.js';
import type { FloorMethod } from '../lib/floor.js';
import { timedGet } from '../lib/http.js';
import {
  type BenchDatabase,
  FORMATS,
  type Format,
  startNetworkDatabase,
  YEAR_ROWS,
  type Year,
  yearHeaders,
  yearRows,
  yearUrl,
} from '../lib/networkFixture.js';
import { type ServerProcess, startServerProcess } from '../lib/serverProcess.js';

requireEnginePrerequisites();

const [ROUNDS, WELLS] = numberArguments(5, 50);
const FLOOR = 'COPY text into Node (the floor)';
const ROW_SOURCE = 'binary COPY, decoded (the row source)';
/** Issue 23's bounds for the series, as a multiple of the floor. */
const SERIES_BOUNDS: Record<Format, number> = { json: 1.5, csv: 1.2, arrow: 1.0 };
/** Issue 36's goal for a year from compressed chunks, TimescaleDB over PostgreSQL, in every format. */
const ENGINE_BOUND = 1.2;

interface Sample {
  ms: number;
  cpuMs: number;
  firstByteMs?: number;
  bytes?: number;
}
type Run = () => Promise<Omit<Sample, 'cpuMs'>>;

/** One engine's database, its server process, and the variants run on it. */
interface OnEngine {
  engine: Engine;
  db: BenchDatabase;
  server: ServerProcess;
  variants: [Year, string, Run][];
}

const floorRequest = (db: BenchDatabase, kind: Year, method: FloorMethod) => ({
  method,
  tubeIds: kind === 'series' ? [db.series.tubeId] : db.network.tubes.map((tube) => tube.id),
  from: SERIES_START,
  to: dayAfterStart(366),
});

function variantsOf(db: BenchDatabase, server: ServerProcess): [Year, string, Run][] {
  return (['series', 'network'] as const).flatMap((kind) => [
    [kind, FLOOR, () => server.floor(floorRequest(db, kind, 'copyText'))],
    [kind, ROW_SOURCE, () => server.floor(floorRequest(db, kind, 'copyBinary'))],
    ...FORMATS.map(
      (format) =>
        [kind, format, () => httpSample(yearUrl(db, server.base, kind, format), yearHeaders(db, kind))] as [
          Year,
          string,
          Run,
        ],
    ),
  ]);
}

console.log(`Formats — ${await machineLine()}\n`);
const engines: OnEngine[] = [];
try {
  for (const engine of benchEngines()) {
    const db = await startNetworkDatabase('bench_formats', WELLS, engine);
    const server = await startServerProcess('api', db.url).catch(async (error) => {
      await db.stop();
      throw error;
    });
    engines.push({ engine, db, server, variants: variantsOf(db, server) });
    const { network } = db;
    console.log(
      `${db.description}\nseries: 1 tube × ${count(YEAR_ROWS)} rows (1-minute data, a year); network: ` +
        `${network.tubes.length} tubes × ${count(network.rows / network.tubes.length)} rows (15-minute data, ` +
        `a year) = ${count(network.rows)} rows; written in ${db.setupSeconds.toFixed(0)} s\n`,
    );
  }
  console.log(`${ROUNDS} rounds; ${await loadLine()}\n`);
  const samples = new Map<string, Sample[]>();
  for (const { db, server } of engines) await checkBodies(db, server);
  for (let round = -1; round < ROUNDS; round++) {
    for (const { engine, server, variants } of engines) {
      for (const [kind, name, run] of variants) {
        const before = server.cpuMs();
        const sample = { ...(await run()), cpuMs: 0 };
        sample.cpuMs = server.cpuMs() - before;
        const key = `${engine} ${kind} ${name}`;
        // Round -1 warms up.
        if (round >= 0) samples.set(key, [...(samples.get(key) ?? []), sample]);
      }
    }
  }
  const of = (engine: Engine, kind: Year, name: string) => samples.get(`${engine} ${kind} ${name}`)!;

  console.log(`${await loadLine()} after the rounds\n`);
  for (const { engine, db, variants } of engines) {
    const medianOf = (kind: Year, name: string, field: keyof Sample) =>
      median(of(engine, kind, name).map((sample) => sample[field]));
    /** This variant's time over the floor's, one per round. */
    const roundRatios = (kind: Year, name: string) =>
      of(engine, kind, name).map((sample, round) => sample.ms / of(engine, kind, FLOOR)[round]!.ms);
    const vsFloor = (kind: Year, name: string) => medianOf(kind, name, 'ms') / medianOf(kind, FLOOR, 'ms');
    console.log(`${ENGINE_NAMES[engine]}\n`);
    for (const kind of ['series', 'network'] as const) {
      printTable(
        [
          kind,
          'total',
          'server CPU',
          'first byte',
          'body',
          'rows/s',
          'vs COPY',
          'rounds',
          'server CPU vs COPY',
        ],
        variants
          .filter(([rows]) => rows === kind)
          .map(([, name]) => {
            const total = medianOf(kind, name, 'ms');
            const firstByte = medianOf(kind, name, 'firstByteMs');
            const bytes = medianOf(kind, name, 'bytes');
            const ratios = roundRatios(kind, name);
            return [
              name,
              ms(total),
              ms(medianOf(kind, name, 'cpuMs')),
              Number.isNaN(firstByte) ? '' : ms(firstByte),
              Number.isNaN(bytes) ? '' : mb(bytes / 1e6),
              count(yearRows(db, kind) / (total / 1000)),
              ratio(vsFloor(kind, name)),
              `${ratio(Math.min(...ratios))} – ${ratio(Math.max(...ratios))}`,
              ratio(medianOf(kind, name, 'cpuMs') / medianOf(kind, FLOOR, 'cpuMs')),
            ];
          }),
      );
    }
    printTable(
      ['format', 'series vs COPY', 'bound', 'met', 'network vs COPY'],
      FORMATS.map((format) => [
        format,
        ratio(vsFloor('series', format)),
        `≤ ${ratio(SERIES_BOUNDS[format])}`,
        vsFloor('series', format) <= SERIES_BOUNDS[format] ? 'yes' : 'NO',
        ratio(vsFloor('network', format)),
      ]),
    );
  }
  for (const [field, title] of [
    ['ms', 'to the last byte'],
    ['cpuMs', 'server CPU'],
  ] as const) {
    printEngineRatios(
      `TimescaleDB over PostgreSQL, ${title}`,
      engines,
      (['series', 'network'] as const).flatMap((kind) =>
        engines[0]!.variants
          .filter(([rows]) => rows === kind)
          .map(([, name]) => ({
            name: `${kind} ${name}`,
            samplesOf: ({ engine }) => of(engine, kind, name).map((sample) => sample[field] as number),
            ...((FORMATS as readonly string[]).includes(name) && field === 'ms'
              ? { bound: ENGINE_BOUND }
              : {}),
          })),
      ),
      ms,
    );
  }
  console.log(`${await loadLine()} at the end`);
} finally {
  for (const { server } of engines) await server.stop().catch(() => {});
  for (const { db } of engines) await db.stop();
}

/** Before timing: each format's body holds every row of the year, series and network. */
async function checkBodies(db: BenchDatabase, server: ServerProcess): Promise<void> {
  for (const kind of ['series', 'network'] as const) {
    for (const format of FORMATS) {
      const counter = rowCounter(format);
      const response = await timedGet(
        yearUrl(db, server.base, kind, format),
        yearHeaders(db, kind),
        false,
        counter.onChunk,
      );
      if (response.status !== 200) throw new Error(`${kind} ${format}: ${response.status}`);
      const { rows } = counter.done();
      if (rows !== yearRows(db, kind))
        throw new Error(`${kind} ${format}: ${rows} rows, not ${yearRows(db, kind)}`);
    }
    const floor = await server.floor(floorRequest(db, kind, 'copyText'));
    if (floor.rows !== yearRows(db, kind))
      throw new Error(`${kind} COPY: ${floor.rows} rows, not ${yearRows(db, kind)}`);
  }
}

async function httpSample(url: string, headers: Record<string, string>) {
  const response = await timedGet(url, headers);
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return { ms: response.totalMs, firstByteMs: response.firstByteMs, bytes: response.bytes };
}

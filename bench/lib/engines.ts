/**
 * The scenarios that read measurements on each engine of BENCH_ENGINE (testkit/databaseServer.ts): the
 * servers all started before the rounds, so that a round runs every variant on every engine and drift of a
 * shared machine hits both alike; the history on TimescaleDB compressed as its policy leaves it; and the
 * table of TimescaleDB over PostgreSQL, per variant, with the range of the per-round ratios.
 */
import type { Sql } from '../../src/db/connect.js';
import { vacuumMeasurements } from '../../src/importers/measurements/measurements.js';
import {
  benchEngines,
  compressAsThePolicyLeavesIt,
  type DatabaseServer,
  ENGINE_NAMES,
  type Engine,
  enginePrerequisites,
  startDatabaseServer,
} from '../../testkit/databaseServer.js';
import { requirePrerequisites } from '../../testkit/prerequisites.js';
import { median, printTable, ratio } from '../../testkit/report.js';
import { type ServerProcess, startServerProcess } from './serverProcess.js';

export { benchEngines, ENGINE_NAMES, type Engine };

/** What the engines of BENCH_ENGINE need (exits with the missing one named, or when only asked). */
export function requireEnginePrerequisites() {
  requirePrerequisites(enginePrerequisites(benchEngines()));
}

/**
 * A server of each engine of this run, in BENCH_ENGINE's order; `startApi(url)` starts the service on one
 * of their databases; `stop` stops them all, the services first.
 */
export async function startEngineServers(settings: Record<string, string> = {}) {
  const servers: DatabaseServer[] = [];
  const apis: ServerProcess[] = [];
  const stop = async () => {
    for (const api of apis) await api.stop().catch(() => {});
    for (const server of servers) await server.stop();
  };
  const startApi = async (url: string) => {
    const api = await startServerProcess('api', url);
    apis.push(api);
    return api;
  };
  try {
    for (const engine of benchEngines()) servers.push(await startDatabaseServer(settings, engine));
  } catch (error) {
    await stop();
    throw error;
  }
  return { servers, startApi, stop };
}

/**
 * After a scenario's fixtures: on TimescaleDB, the history compressed as the compression policy leaves it
 * (every chunk older than its compress_after), vacuumed and analysed again as an import leaves it; a line
 * for the report saying so. On PostgreSQL nothing, and no line.
 */
export async function asThePolicyLeavesIt(server: DatabaseServer, sql: Sql): Promise<string> {
  if (server.engine !== 'timescaledb') return '';
  const started = performance.now();
  const history = await compressAsThePolicyLeavesIt(sql);
  await vacuumMeasurements(sql);
  const [{ bytes, rows }] = (await sql`
    select hypertable_size('measurements')::float8 as bytes, (select count(*) from measurements)::float8 as rows`) as [
    { bytes: number; rows: number },
  ];
  const perRow = rows > 0 ? `; ${(bytes / rows).toFixed(1)} bytes a row on disk, indexes included` : '';
  return (
    `the compression policy (older than ${history.compressAfter}) compressed ${history.compressed} chunks ` +
    `and left ${history.uncompressed} in ${((performance.now() - started) / 1000).toFixed(0)} s${perRow}`
  );
}

/** A figure measured on each engine in the same rounds: its samples by engine, one per round. */
export interface EngineFigure {
  name: string;
  samples: Partial<Record<Engine, number[]>>;
  /** The goal for TimescaleDB over PostgreSQL, when there is one. */
  bound?: number;
}

/** A figure's samples by engine, each from the scenario's part on that engine. */
export function samplesByEngine<Part extends { engine: Engine }>(
  parts: Part[],
  samplesOf: (part: Part) => number[],
) {
  return Object.fromEntries(parts.map((part) => [part.engine, samplesOf(part)])) as EngineFigure['samples'];
}

/**
 * TimescaleDB over PostgreSQL for each figure: the ratio of the medians, the range of the per-round ratios,
 * and whether it meets its bound. Prints nothing unless both engines ran.
 */
export function printEngineRatios(title: string, figures: EngineFigure[], format: (value: number) => string) {
  if (!benchEngines().includes('postgres') || !benchEngines().includes('timescaledb')) return;
  printTable(
    [
      title,
      ENGINE_NAMES.postgres,
      ENGINE_NAMES.timescaledb,
      'TimescaleDB / PostgreSQL',
      'rounds',
      'bound',
      'met',
    ],
    figures.map(({ name, samples, bound }) => {
      const plain = samples.postgres ?? [];
      const timescale = samples.timescaledb ?? [];
      const ratios = timescale.map((value, round) => value / plain[round]!);
      const medians = median(timescale) / median(plain);
      return [
        name,
        format(median(plain)),
        format(median(timescale)),
        ratio(medians),
        `${ratio(Math.min(...ratios))} – ${ratio(Math.max(...ratios))}`,
        bound === undefined ? '' : `≤ ${ratio(bound)}`,
        bound === undefined ? '' : medians <= bound ? 'yes' : 'NO',
      ];
    }),
  );
}

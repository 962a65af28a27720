/**
 * The scenarios that read measurements on each engine of BENCH_ENGINE (testkit/databaseServer.ts): the
 * servers all started before the rounds, so that a round runs every variant on every engine and drift of
 * a shared machine hits both alike; the history on TimescaleDB compressed as its policy leaves it; and
 * the table of TimescaleDB over PostgreSQL, per variant, with the range of the per-round ratios.
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

/** A scenario's database on the server of one engine of this run. */
export interface EngineDatabase {
  engine: Engine;
  /** Its name for the report: `TimescaleDB`. */
  engineName: string;
  url: string;
  sql: Sql;
  /** After the scenario's fixtures: asThePolicyLeavesIt on this database, its line for the report. */
  asThePolicyLeavesIt(): Promise<string>;
  /** The service on this database, in a process of its own. */
  startApi(): Promise<ServerProcess>;
}

/**
 * A scenario's part on each engine of this run, in BENCH_ENGINE's order: the servers all started first,
 * then on each a migrated database `name` that `setUp` fills and makes the part from, so that the rounds
 * run every variant on every engine. Each part carries its engine and the engine's name. `stop` stops
 * them all, the services first; a setUp that fails stops them too.
 */
export async function onEachEngine<Part>(name: string, setUp: (db: EngineDatabase) => Promise<Part>) {
  const servers: DatabaseServer[] = [];
  const apis: ServerProcess[] = [];
  const stop = async () => {
    for (const api of apis) await api.stop().catch(() => {});
    for (const server of servers) await server.stop();
  };
  const parts: (Part & Pick<EngineDatabase, 'engine' | 'engineName'>)[] = [];
  try {
    for (const engine of benchEngines()) servers.push(await startDatabaseServer({}, engine));
    for (const server of servers) {
      const { url, sql } = await server.database(name);
      const { engine } = server;
      const on = { engine, engineName: ENGINE_NAMES[engine] };
      const part = await setUp({
        ...on,
        url,
        sql,
        asThePolicyLeavesIt: () => asThePolicyLeavesIt(server, sql),
        async startApi() {
          const api = await startServerProcess('api', url);
          apis.push(api);
          return api;
        },
      });
      parts.push({ ...part, ...on });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { parts, stop };
}

/**
 * After a scenario's fixtures: on TimescaleDB, the history compressed as the compression policy leaves it
 * (every chunk older than its compress_after), vacuumed and analysed again as an import leaves it. The
 * line for the report: the server, and on TimescaleDB what the policy compressed.
 */
export async function asThePolicyLeavesIt(server: DatabaseServer, sql: Sql): Promise<string> {
  if (server.engine !== 'timescaledb') return server.description;
  const started = performance.now();
  const history = await compressAsThePolicyLeavesIt(sql);
  await vacuumMeasurements(sql);
  const [{ bytes, rows }] = (await sql`
    select hypertable_size('measurements')::float8 as bytes, (select count(*) from measurements)::float8 as rows`) as [
    { bytes: number; rows: number },
  ];
  const perRow = rows > 0 ? `; ${(bytes / rows).toFixed(1)} bytes a row on disk, indexes included` : '';
  return (
    `${server.description}; the compression policy (older than ${history.compressAfter}) compressed ` +
    `${history.compressed} chunks and left ${history.uncompressed} in ` +
    `${((performance.now() - started) / 1000).toFixed(0)} s${perRow}`
  );
}

/** A figure measured on each engine in the same rounds. */
export interface EngineFigure<Part> {
  name: string;
  /** Its samples on the engine of `part`, one per round. */
  samplesOf: (part: Part) => number[];
  /** The goal for TimescaleDB over PostgreSQL, when there is one. */
  bound?: number;
}

/**
 * TimescaleDB over PostgreSQL for each figure: the ratio of the medians, the range of the per-round ratios,
 * and whether it meets its bound. Prints nothing unless both engines ran.
 */
export function printEngineRatios<Part extends { engine: Engine }>(
  title: string,
  parts: Part[],
  figures: EngineFigure<Part>[],
  format: (value: number) => string,
) {
  const on = (engine: Engine) => parts.find((part) => part.engine === engine);
  const [plainPart, timescalePart] = [on('postgres'), on('timescaledb')];
  if (!plainPart || !timescalePart) return;
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
    figures.map(({ name, samplesOf, bound }) => {
      const plain = samplesOf(plainPart);
      const timescale = samplesOf(timescalePart);
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

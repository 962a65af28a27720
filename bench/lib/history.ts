/**
 * Writes into history, for the import and corrections scenarios: a database holding a year of one tube
 * (1-minute data, 2024) and a network of 1,000 tubes with two months of hourly data (March and April
 * 2024, so a chunk holds 1,000 tubes), as the compression policy leaves it on TimescaleDB (every chunk,
 * all being older than 180 days) and as it is on PostgreSQL. Each write is timed on a connection of its
 * own, as each `gwapi` command opens one.
 */
import { connect, type Sql } from '../../src/db/connect.js';
import {
  benchEngines,
  type CompressedHistory,
  compressAsThePolicyLeavesIt,
  type DatabaseServer,
  ENGINE_NAMES,
  type Engine,
  startDatabaseServer,
} from '../../testkit/databaseServer.js';
import { addNetwork } from '../../testkit/fixtures.js';
import { loadLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import { addSeriesFixture } from '../../testkit/seriesFixture.js';
import { timed } from './importFixture.js';

const NETWORK_TUBES = 1_000;
const NETWORK_FROM = '2024-03-01T00:00:00Z';
const NETWORK_TO = '2024-05-01T00:00:00Z';

export interface History {
  url: string;
  /** The year's tube. */
  year: string;
  /** The network's tubes. */
  network: string[];
  /** The network's months, [from, to). */
  networkMonths: { from: string; to: string };
  /** On TimescaleDB: what the policy left. */
  compressed?: CompressedHistory;
  /**
   * Throws unless the chunks holding `[from, to)` are compressed (on TimescaleDB): a write meant to land
   * in compressed history must find it so.
   */
  assertCompressed(from: string, to: string): Promise<void>;
}

/** The engine's server (`settings` on top of the testkit's) with the history in database `name`, described. */
export async function historyOn(
  engine: Engine,
  name: string,
  settings: Record<string, string> = {},
): Promise<{ server: DatabaseServer; history: History }> {
  const server = await startDatabaseServer(settings, engine);
  try {
    const history = await historyDatabase(server, name);
    console.log(
      `${ENGINE_NAMES[engine]}: ${server.description}` +
        (history.compressed ? `; ${history.compressed.compressed} chunks compressed by the policy` : ''),
    );
    return { server, history };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function historyDatabase(server: DatabaseServer, name: string): Promise<History> {
  const { url, sql } = await server.database(name);
  const year = await addSeriesFixture(sql);
  const network = await addNetwork(sql, NETWORK_TUBES, {
    from: NETWORK_FROM,
    to: NETWORK_TO,
    step: '1 hour',
  });
  const timescale = server.engine === 'timescaledb';
  const history: History = {
    url,
    year: year.identifier,
    network: network.map((tube) => tube.identifier),
    networkMonths: { from: NETWORK_FROM, to: NETWORK_TO },
    assertCompressed: async (from, to) => {
      if (timescale) await assertCompressed(sql, from, to);
    },
  };
  if (timescale) history.compressed = await compressAsThePolicyLeavesIt(sql);
  await server.checkpoint();
  return history;
}

async function assertCompressed(sql: Sql, from: string, to: string): Promise<void> {
  const [row] = await sql<{ uncompressed: number }[]>`
    select count(*) filter (where not is_compressed)::int as uncompressed
    from timescaledb_information.chunks
    where hypertable_name = 'measurements' and range_end > ${from}::timestamptz
      and range_start < ${to}::timestamptz`;
  if (row!.uncompressed > 0) throw new Error(`a chunk of ${from} to ${to} is not compressed`);
}

/** `work` on a connection of its own, opened before and closed after the timing; its seconds. */
export async function timedOnItsOwn(url: string, work: (sql: Sql) => Promise<unknown>): Promise<number> {
  const sql = connect(url, { max: 1, applicationName: 'gwapi bench write' });
  try {
    await sql`select 1`;
    return await timed(() => work(sql));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Measures the writes `labels` names on each engine BENCH_ENGINE names, one after the other (seconds,
 * a list of runs each), then prints each write's median per engine and, with both, TimescaleDB's over
 * PostgreSQL's.
 */
export async function onEachEngine<Write extends string>(
  labels: Record<Write, string>,
  measure: (engine: Engine) => Promise<Record<Write, number[]>>,
): Promise<void> {
  const engines = benchEngines();
  const byEngine = new Map<Engine, Record<Write, number[]>>();
  for (const engine of engines) byEngine.set(engine, await measure(engine));
  console.log(`\nMedians of the runs (${await loadLine()})`);
  const both = engines.length === 2;
  printTable(
    ['', ...engines.map((engine) => ENGINE_NAMES[engine]), ...(both ? ['TimescaleDB / PostgreSQL'] : [])],
    (Object.keys(labels) as Write[]).map((write) => {
      const medians = engines.map((engine) => median(byEngine.get(engine)![write]) * 1000);
      return [labels[write], ...medians.map(ms), ...(both ? [ratio(medians[1]! / medians[0]!)] : [])];
    }),
  );
}

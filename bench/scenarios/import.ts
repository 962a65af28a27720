/**
 * Import benchmark: a year of 1-minute data for one tube (527,040 rows) through `importMeasurements`,
 * as `gwapi import measurements FILE` runs it, against a plain `COPY … (format csv)` of the same file
 * into a bare table (no index, no checks): the floor of what PostgreSQL can ingest. For context also
 * the same COPY into a table with measurements' primary key, the import's own binary rows into a twin
 * of measurements (its key and checks: what PostgreSQL alone spends on them), the import's staging
 * path (forced here by one stored row just after the file's range, see measurementsPaths.test.ts), and
 * a re-import of the same file; then the same file with a status column through both paths, against
 * the file without.
 *
 *   npm run bench -- import [ROWS] [RUNS]      (DATABASE_URL, or an embedded PostgreSQL)
 *
 * Then, on each engine BENCH_ENGINE names (testkit/databaseServer.ts), writes into history as the
 * compression policy leaves it (bench/lib/history.ts): a day of the year's tube imported again with
 * other values, and again unchanged, and a day of one tube of the 1,000 in a chunk with other values;
 * each as `gwapi import measurements` runs it (its own connection), then its maintenance
 * (`vacuumMeasurements` of what it wrote). With both engines, TimescaleDB / PostgreSQL of the medians.
 *
 * Each run imports into an empty measurements table, and each variant starts after a checkpoint.
 * Prints the best and the median of the runs: the machine is shared, and noise only ever adds time. For the bare COPY and the direct path also what
 * does not depend on the machine's load: the server backends' CPU time, this process's (the import's
 * Node side) and the WAL written (on an embedded server only, whose processes are on this machine).
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { connect, type Sql } from '../../src/db/connect.js';
import { measurementColumns, storesThousandths } from '../../src/db/valueStorage.js';
import { formatInstant } from '../../src/domain/datetime.js';
import { ErrorCollector } from '../../src/importers/importErrors.js';
import { openInput } from '../../src/importers/inputFile.js';
import { COPY_HEADER, COPY_TRAILER } from '../../src/importers/measurements/copy/copyBinary.js';
import { MeasurementCsv } from '../../src/importers/measurements/csv/measurementCsv.js';
import { DirectRows } from '../../src/importers/measurements/directRows.js';
import {
  changeLogMark,
  importMeasurements,
  vacuumMeasurements,
} from '../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { numberArguments } from '../../testkit/arguments.js';
import { benchEngines, type Engine, enginePrerequisites } from '../../testkit/databaseServer.js';
import { migrateAlone, postgresOrThrowaway } from '../../testkit/postgres.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { dayAfterStart } from '../../testkit/seriesFixture.js';
import { backendCpuMeter, ownCpuMs } from '../lib/cpu.js';
import { historyOn, onEachEngine, timedOnItsOwn } from '../lib/history.js';
import {
  DURABLE_SETTINGS,
  IMPORT_REGISTRY,
  IMPORT_START,
  IMPORT_TUBE,
  timed,
  writeYearCsv,
  YEAR_ROWS,
} from '../lib/importFixture.js';

requirePrerequisites([throwawayPostgres, ...enginePrerequisites(benchEngines())]);

const [ROWS, RUNS] = numberArguments(YEAR_ROWS, 3);
/** One minute after the file's last row. */
const AFTER_THE_FILE = formatInstant({ seconds: IMPORT_START + ROWS * 60, micros: 0 });

const seconds = (s: number) => `${s.toFixed(3).padStart(5)} s`;

const LABELS = {
  copy: 'plain COPY (csv) into a bare table',
  copyIndexed: 'plain COPY (csv) into a table with our primary key',
  copyTwin: 'binary COPY of its rows into a twin of measurements',
  direct: 'gwapi import, direct path (to commit)',
  vacuum: 'vacuum measurements afterwards',
  reimport: 'gwapi import again (every row unchanged)',
  staged: 'gwapi import, staging path (to commit)',
  directStatus: 'with a status column, direct path',
  stagedStatus: 'with a status column, staging path',
};

const dir = await mkdtemp(join(tmpdir(), 'gwapi-bench-import-'));
const postgres = await postgresOrThrowaway(process.env.DATABASE_URL, DURABLE_SETTINGS);
const APPLICATION_NAME = 'gwapi bench import';
const sql = connect(postgres.url, { max: 2, applicationName: APPLICATION_NAME });
const backends = backendCpuMeter(sql, APPLICATION_NAME);

/** CPU seconds of the server's backends and of this process, and WAL MB, of one run of one variant. */
interface Cost {
  server: number;
  node: number;
  wal: number;
}
const costs: Record<'copy' | 'copyTwin' | 'direct' | 'directStatus', Cost[]> = {
  copy: [],
  copyTwin: [],
  direct: [],
  directStatus: [],
};

/**
 * `timed`, after a checkpoint: each variant starts with no dirty buffers left by the one before, which
 * its backend would otherwise write out as it needs buffers, and no checkpoint under way.
 */
async function settledTimed(work: () => Promise<unknown>): Promise<number> {
  await sql`checkpoint`;
  return await timed(work);
}

/** `settledTimed`, noting the variant's cost too (embedded server only). */
async function costed(kind: keyof typeof costs, work: () => Promise<unknown>): Promise<number> {
  await sql`checkpoint`;
  if (process.env.DATABASE_URL) return await timed(work);
  const [start] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
  await backends.start();
  const node = ownCpuMs();
  const time = await timed(work);
  const server = await backends.stop();
  const own = ownCpuMs() - node;
  const [wal] = await sql<{ bytes: number }[]>`
    select (pg_current_wal_lsn() - ${start!.lsn}::pg_lsn)::float8 as bytes`;
  costs[kind].push({ server: server / 1000, node: own / 1000, wal: wal!.bytes / 1e6 });
  return time;
}

try {
  await migrateAlone(postgres.url);
  await upsertRegistry(sql, IMPORT_REGISTRY);
  const file = join(dir, 'year.csv');
  await writeYearCsv(file, ROWS);
  const statusFile = join(dir, 'year-status.csv');
  await writeYearCsv(statusFile, ROWS, true);
  const size = (await stat(file)).size;
  const [server] = await sql<{ version: string }[]>`select current_setting('server_version') as version`;
  console.log(
    `${ROWS.toLocaleString('en-US')} rows, ${(size / 1e6).toFixed(1)} MB CSV; ${RUNS} runs; ` +
      `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
      `Node ${process.versions.node}, PostgreSQL ${server?.version}`,
  );

  const runs: Record<keyof typeof LABELS, number[]> = {
    copy: [],
    copyIndexed: [],
    copyTwin: [],
    direct: [],
    vacuum: [],
    staged: [],
    reimport: [],
    directStatus: [],
    stagedStatus: [],
  };
  const importOf = (path: string) => async () => {
    await importMeasurements(sql, await openInput(path), { name: path });
  };
  const gwapiImport = importOf(file);
  /** An empty table but for one row just after the file's range, which sends the file to the staging path. */
  const storedAfterTheFile = async () => {
    await sql`truncate measurements`;
    await sql`insert into measurements select id, ${AFTER_THE_FILE}, 0 from tubes`;
  };
  const encoded = await directRowsOf(sql, file);
  for (let run = 0; run < RUNS; run++) {
    await sql`truncate measurements`;
    runs.copy.push(await costed('copy', () => plainCopy(sql, file, false)));
    runs.copyTwin.push(await costed('copyTwin', () => twinCopy(sql, encoded)));
    runs.direct.push(await costed('direct', gwapiImport));
    runs.vacuum.push(await settledTimed(() => vacuumMeasurements(sql)));
    runs.reimport.push(await settledTimed(gwapiImport));
    runs.copyIndexed.push(await settledTimed(() => plainCopy(sql, file, true)));
    await storedAfterTheFile();
    runs.staged.push(await settledTimed(gwapiImport));
    await sql`truncate measurements`;
    runs.directStatus.push(await costed('directStatus', importOf(statusFile)));
    await storedAfterTheFile();
    runs.stagedStatus.push(await settledTimed(importOf(statusFile)));
  }
  await sql`drop table if exists bare, twin`;

  const best = (times: number[]) => Math.min(...times);
  const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  console.log(`${''.padEnd(52)}   best    median   rows/s (median)`);
  for (const [kind, label] of Object.entries(LABELS) as [keyof typeof LABELS, string][]) {
    const times = runs[kind];
    const rate = Math.round(ROWS / median(times)).toLocaleString('en-US');
    console.log(
      `${label.padEnd(52)} ${seconds(best(times))} ${seconds(median(times))}  ${rate.padStart(10)}`,
    );
  }
  // Ratios of the bests, of the medians, and the median of each run's own ratio: a run's import and
  // COPY follow each other within seconds, so that one holds best while the shared machine's load drifts.
  console.log(`${''.padEnd(52)}   best  median  median of the runs' ratios`);
  const ratio = (label: string, over: number[], under: number[]) => {
    const perRun = median(over.map((x, i) => x / under[i]!));
    const figures = [best(over) / best(under), median(over) / median(under), perRun];
    console.log(`${label.padEnd(52)} ${figures.map((r) => r.toFixed(2).padStart(7)).join('')}`);
  };
  const plus = (a: number[], b: number[]) => a.map((x, i) => x + b[i]!);
  ratio('ratio import / COPY', runs.direct, runs.copy);
  ratio('ratio (import + vacuum) / COPY', plus(runs.direct, runs.vacuum), runs.copy);
  ratio('ratio import / COPY with the primary key', runs.direct, runs.copyIndexed);
  ratio('ratio import / binary COPY into the twin', runs.direct, runs.copyTwin);
  ratio('ratio binary COPY into the twin / COPY', runs.copyTwin, runs.copy);
  ratio('ratio staging path / COPY', runs.staged, runs.copy);
  ratio('ratio with a status column / without: direct path', runs.directStatus, runs.direct);
  ratio('ratio with a status column / without: staging path', runs.stagedStatus, runs.staged);
  if (costs.copy.length > 0) {
    console.log(`${'medians of the runs'.padEnd(52)} server CPU  own CPU    WAL`);
    for (const kind of Object.keys(costs) as (keyof typeof costs)[]) {
      const column = (pick: (cost: Cost) => number, unit: string) =>
        `${median(costs[kind].map(pick)).toFixed(2)} ${unit}`.padStart(10);
      console.log(
        `${LABELS[kind].padEnd(52)} ${column((c) => c.server, 's')} ${column((c) => c.node, 's')} ${column((c) => c.wal, 'MB')}`,
      );
    }
    // What the load does not change as much as wall time: the server's CPU, and all the CPU.
    const cpu = (kind: keyof typeof costs, pick: (cost: Cost) => number) => costs[kind].map(pick);
    const server = (cost: Cost) => cost.server;
    const both = (cost: Cost) => cost.server + cost.node;
    console.log(`${'CPU ratios'.padEnd(52)}   best  median  median of the runs' ratios`);
    ratio('server CPU, import / COPY', cpu('direct', server), cpu('copy', server));
    ratio('server and own CPU, import / COPY', cpu('direct', both), cpu('copy', both));
    ratio('server CPU, with a status column / without', cpu('directStatus', server), cpu('direct', server));
  }
} finally {
  await sql.end({ timeout: 5 });
  await postgres.stop();
  await rm(dir, { recursive: true, force: true });
}

const HISTORY = {
  day: 'a day of one tube again, other values (1,440 rows)',
  dayMaintenance: '  its maintenance',
  unchanged: 'the same day again, unchanged',
  networkDay: 'a day of 1 of 1,000 tubes, other values (24 rows)',
  networkMaintenance: '  its maintenance',
};
type HistoryWrite = keyof typeof HISTORY;

/** A day of `tube` from `day` (RFC 3339 midnight), one row every `stepMinutes`, values shifted by `shift`. */
function dayCsv(tube: string, day: string, stepMinutes: number, shift: number): Readable {
  const start = Date.parse(day);
  const lines = ['tubeIdentifier,observedAt,value'];
  for (let minute = 0; minute < 1440; minute += stepMinutes) {
    const at = formatInstant({ seconds: start / 1000 + minute * 60, micros: 0 });
    lines.push(`${tube},${at},${(shift + minute / 1000).toFixed(3)}`);
  }
  return Readable.from([`${lines.join('\n')}\n`]);
}

/** The import of `csv` on its own connection, then its maintenance: seconds of each. */
async function importThenMaintain(url: string, csv: () => Readable): Promise<[number, number]> {
  let since = '';
  const writing = await timedOnItsOwn(url, async (sql) => {
    since = await changeLogMark(sql);
    await importMeasurements(sql, csv(), { name: 'day.csv' });
  });
  const maintaining = await timedOnItsOwn(url, (sql) => vacuumMeasurements(sql, since));
  return [writing, maintaining];
}

/** Each write RUNS times, each run in another chunk (another tube of the network), all compressed before. */
async function intoHistory(engine: Engine): Promise<Record<HistoryWrite, number[]>> {
  const { server, history } = await historyOn(engine, 'bench_import_history', DURABLE_SETTINGS);
  const times: Record<HistoryWrite, number[]> = {
    day: [],
    dayMaintenance: [],
    unchanged: [],
    networkDay: [],
    networkMaintenance: [],
  };
  try {
    for (let run = 0; run < RUNS; run++) {
      // A month apart: each run's day in a chunk of its own.
      const day = dayAfterStart(40 + run * 30);
      await history.assertCompressed(day, dayAfterStart(41 + run * 30));
      const [writing, maintaining] = await importThenMaintain(history.url, () =>
        dayCsv(history.year, day, 1, 5 + run),
      );
      times.day.push(writing);
      times.dayMaintenance.push(maintaining);
      times.unchanged.push(
        (await importThenMaintain(history.url, () => dayCsv(history.year, day, 1, 5 + run)))[0],
      );
      const networkDay = new Date(Date.parse(history.networkMonths.from) + 10 * 86_400_000).toISOString();
      await history.assertCompressed(networkDay, history.networkMonths.to);
      const tube = history.network[(run * 97) % history.network.length]!;
      const [networkWriting, networkMaintaining] = await importThenMaintain(history.url, () =>
        dayCsv(tube, networkDay, 60, 5 + run),
      );
      times.networkDay.push(networkWriting);
      times.networkMaintenance.push(networkMaintaining);
    }
  } finally {
    await server.stop();
  }
  return times;
}

console.log('\nInto history');
await onEachEngine(HISTORY, intoHistory);

/** `indexed`: with the primary key measurements has, most of an import's cost (bench/README.md). */
async function plainCopy(sql: Sql, file: string, indexed: boolean): Promise<void> {
  await sql`drop table if exists bare`;
  await sql`create table bare (tube uuid, observed_at timestamptz, value float8)`;
  if (indexed) await sql`alter table bare add primary key (tube, observed_at) include (value)`;
  const writable = await sql`copy bare from stdin (format csv, header true)`.writable();
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), writable);
}

/**
 * The file's rows exactly as the direct path sends them (binary COPY rows of measurements), encoded
 * beforehand, so that their COPY times PostgreSQL's part alone.
 */
async function directRowsOf(sql: Sql, path: string): Promise<Buffer[]> {
  const [tube] = await sql<{ id: number }[]>`select id from tubes where identifier = ${IMPORT_TUBE}`;
  const rows = new DirectRows(1, await storesThousandths(sql));
  const csv = new MeasurementCsv(path, new ErrorCollector(), rows);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) csv.write(chunk);
  csv.end();
  for (const found of rows.newTubes()) found.id = tube!.id;
  rows.identify();
  return [COPY_HEADER, ...rows.take(), COPY_TRAILER];
}

/**
 * Those rows into a new table with measurements' columns, key and checks: what PostgreSQL spends on
 * writing them into this index, without the import's parsing, lookups, change rows and rollups.
 */
async function twinCopy(sql: Sql, rows: Buffer[]): Promise<void> {
  await sql`drop table if exists twin`;
  await sql`create table twin (like measurements including defaults including constraints including indexes)`;
  const columns = measurementColumns(await storesThousandths(sql));
  const writable = await sql`copy twin (${sql.unsafe(columns)}) from stdin (format binary)`.writable();
  await pipeline(Readable.from(rows), writable);
}

/**
 * Import benchmark: a year of 1-minute data for one tube (527,040 rows) through `importMeasurements`,
 * as `gwapi import measurements FILE` runs it, against a plain `COPY … (format csv)` of the same file
 * into a bare table (no index, no checks): the floor of what PostgreSQL can ingest. For context also
 * the same COPY into a table with measurements' primary key, the import's staging path (forced here by
 * one stored row just after the file's range, see measurementsPaths.test.ts), and a re-import of the
 * same file.
 *
 *   npm run bench -- import [ROWS] [RUNS]      (DATABASE_URL, or an embedded PostgreSQL)
 *
 * Each run imports into an empty measurements table. Prints the best and the median of the runs: the
 * machine is shared, and noise only ever adds time.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { connect, type Sql } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { formatInstant } from '../../src/domain/datetime.js';
import { openInput } from '../../src/importers/inputFile.js';
import { importMeasurements, vacuumMeasurements } from '../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { postgresOrThrowaway } from '../../testkit/postgres.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import {
  DURABLE_SETTINGS,
  IMPORT_REGISTRY,
  IMPORT_START,
  timed,
  writeYearCsv,
  YEAR_ROWS,
} from '../lib/importFixture.js';

requirePrerequisites([throwawayPostgres]);

const ROWS = Number(process.argv[2] ?? YEAR_ROWS);
const RUNS = Number(process.argv[3] ?? 3);
/** One minute after the file's last row. */
const AFTER_THE_FILE = formatInstant({ seconds: IMPORT_START + ROWS * 60, micros: 0 });

const seconds = (s: number) => `${s.toFixed(3).padStart(5)} s`;

const LABELS = {
  copy: 'plain COPY (csv) into a bare table',
  copyIndexed: 'plain COPY (csv) into a table with our primary key',
  direct: 'gwapi import, direct path (to commit)',
  vacuum: 'vacuum measurements afterwards',
  reimport: 'gwapi import again (every row unchanged)',
  staged: 'gwapi import, staging path (to commit)',
};

const dir = await mkdtemp(join(tmpdir(), 'gwapi-bench-import-'));
const postgres = await postgresOrThrowaway(process.env.DATABASE_URL, DURABLE_SETTINGS);
const sql = connect(postgres.url, { max: 2, applicationName: 'gwapi bench import' });

try {
  await migrate(sql);
  await upsertRegistry(sql, IMPORT_REGISTRY);
  const file = join(dir, 'year.csv');
  await writeYearCsv(file, ROWS);
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
    direct: [],
    vacuum: [],
    staged: [],
    reimport: [],
  };
  const gwapiImport = async () => {
    await importMeasurements(sql, await openInput(file), { name: file });
  };
  for (let run = 0; run < RUNS; run++) {
    await sql`truncate measurements`;
    runs.copy.push(await timed(() => plainCopy(sql, file, false)));
    runs.direct.push(await timed(gwapiImport));
    runs.vacuum.push(await timed(() => vacuumMeasurements(sql)));
    runs.reimport.push(await timed(gwapiImport));
    runs.copyIndexed.push(await timed(() => plainCopy(sql, file, true)));
    await sql`truncate measurements`;
    await sql`insert into measurements select id, ${AFTER_THE_FILE}, 0 from tubes`;
    runs.staged.push(await timed(gwapiImport));
  }
  await sql`drop table if exists bare`;

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
  ratio('ratio staging path / COPY', runs.staged, runs.copy);
} finally {
  await sql.end({ timeout: 5 });
  await postgres.stop();
  await rm(dir, { recursive: true, force: true });
}

/** `indexed`: with the primary key measurements has, most of an import's cost (bench/README.md). */
async function plainCopy(sql: Sql, file: string, indexed: boolean): Promise<void> {
  await sql`drop table if exists bare`;
  await sql`create table bare (tube uuid, observed_at timestamptz, value float8)`;
  if (indexed) await sql`alter table bare add primary key (tube, observed_at) include (value)`;
  const writable = await sql`copy bare from stdin (format csv, header true)`.writable();
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), writable);
}

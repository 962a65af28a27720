/**
 * Import benchmark: a year of 1-minute data for one tube (527,040 rows) through `importMeasurements`,
 * against a plain `COPY … (format csv)` of the same file into a bare table (no index, no checks): the
 * floor of what PostgreSQL can ingest. Prints both times and their ratio, and for context the same COPY
 * into a table with measurements' primary key.
 *
 *   node --import tsx bench/import.ts [ROWS] [RUNS]      (DATABASE_URL, or an embedded PostgreSQL)
 *
 * Each run imports into an empty measurements table; the best run of each kind counts, since the
 * machine is shared and noise only ever adds time.
 */
import { createReadStream } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { connect, type Sql } from '../src/db/connect.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { formatInstant } from '../src/domain/datetime.js';
import { openInput } from '../src/importers/inputFile.js';
import { importMeasurements, vacuumMeasurements } from '../src/importers/measurements.js';
import { upsertRegistry } from '../src/importers/registry.js';

const ROWS = Number(process.argv[2] ?? 527_040);
const RUNS = Number(process.argv[3] ?? 3);
const TUBE = '5a1c0b9e-6f3d-4c1e-9d2a-0b7e4f8a1c33';

const dir = await mkdtemp(join(tmpdir(), 'gwapi-bench-'));
await chmod(dir, 0o755);
let stopServer = async () => {};
let url = process.env.DATABASE_URL;
if (!url) {
  const server = await startEmbeddedPostgres({ dir: join(dir, 'pg'), persistent: false });
  url = server.url;
  stopServer = server.stop;
}
const sql = connect(url, { max: 2, applicationName: 'gwapi bench import' });

try {
  await migrate(sql);
  await upsertRegistry(sql, [{ name: 'bench', tubes: [{ identifier: TUBE, number: '1' }] }]);
  const file = join(dir, 'year.csv');
  await writeYear(file);
  const size = (await stat(file)).size;
  console.log(
    `${ROWS.toLocaleString('en-US')} rows, ${(size / 1e6).toFixed(1)} MB CSV; best of ${RUNS} runs`,
  );

  const copy: number[] = [];
  const copyIndexed: number[] = [];
  const imports: number[] = [];
  const vacuums: number[] = [];
  let reimport = 0;
  for (let run = 0; run < RUNS; run++) {
    copy.push(await timed(() => plainCopy(sql, file, false)));
    copyIndexed.push(await timed(() => plainCopy(sql, file, true)));
    await sql`truncate measurements`;
    imports.push(
      await timed(async () => {
        await importMeasurements(sql, await openInput(file), { name: file });
      }),
    );
    vacuums.push(await timed(() => vacuumMeasurements(sql)));
    if (run === RUNS - 1) {
      reimport = await timed(async () => {
        await importMeasurements(sql, await openInput(file), { name: file });
      });
    }
  }
  const best = (times: number[]) => Math.min(...times);
  const line = (label: string, seconds: number) =>
    console.log(
      `${label.padEnd(44)} ${seconds.toFixed(3)} s  ${Math.round(ROWS / seconds).toLocaleString('en-US')} rows/s`,
    );
  line('plain COPY (csv) into a bare table', best(copy));
  line('plain COPY (csv) into a table with our primary key', best(copyIndexed));
  line('gwapi import (to commit)', best(imports));
  line('vacuum (analyze) measurements afterwards', best(vacuums));
  line('gwapi import again (every row unchanged)', reimport);
  console.log(`ratio import / COPY: ${(best(imports) / best(copy)).toFixed(2)}`);
  console.log(`ratio (import + vacuum) / COPY: ${((best(imports) + best(vacuums)) / best(copy)).toFixed(2)}`);
  console.log(`ratio import / COPY with the primary key: ${(best(imports) / best(copyIndexed)).toFixed(2)}`);
} finally {
  await sql.end({ timeout: 5 });
  await stopServer();
  await rm(dir, { recursive: true, force: true });
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

/** One value a minute from 2023-01-01, like a logger's export. */
async function writeYear(file: string): Promise<void> {
  const start = Date.UTC(2023, 0, 1) / 1000;
  const lines = ['tubeIdentifier,observedAt,value'];
  for (let i = 0; i < ROWS; i++) {
    const level = (-1.5 + Math.sin(i / 1440) * 0.4 + (i % 97) / 1000).toFixed(3);
    lines.push(`${TUBE},${formatInstant({ seconds: start + i * 60, micros: 0 })},${level}`);
  }
  await writeFile(file, `${lines.join('\n')}\n`);
}

/** `indexed`: with the primary key measurements has, which alone about doubles the cost of loading. */
async function plainCopy(sql: Sql, file: string, indexed: boolean): Promise<void> {
  await sql`drop table if exists bare`;
  await sql`create table bare (tube uuid, observed_at timestamptz, value float8)`;
  if (indexed) await sql`alter table bare add primary key (tube, observed_at) include (value)`;
  const writable = await sql`copy bare from stdin (format csv, header true)`.writable();
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), writable);
}

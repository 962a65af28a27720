/**
 * A national network against a table of 10 million rows, on native TimescaleDB: TUBES tubes (2 per
 * well, the wells with locations) with YEARS of hourly levels, written chunk by chunk straight into
 * compressed chunks (bench/lib/historyWriter.ts) by WRITERS sessions at once; and beside it, on the same
 * server, the same history for as many tubes as make 10 million rows. Every chunk of both is compressed,
 * the last month provisional, the rest approved; latest_measurements filled from the stored rows, as
 * the migration's backfill does. The day rollups are not filled: no request below reads them.
 *
 * The history is loaded as an operator loads an archive before attaching standbys (`wal_level =
 * minimal`); the server is then restarted with `wal_level = replica`, as production runs it, and both
 * are read through the service over HTTP (limits lifted), with one key that reads the reference's
 * tubes on each, so that each request asks the same of both:
 *
 * - a year (366 days) of one tube, JSON;
 * - latest of the key's tubes, and discovery of its wells (JSON);
 * - a delta through a real sync token: a network request for 100 tubes over the history's last day and
 *   the next, then `importMeasurements` of 10 new rows for each (in a new, uncompressed chunk), then
 *   the same request with `changedSince`: the import's 1,000 rows;
 * - the planning time of the year's select (src/engine/read/selects.ts), from EXPLAIN;
 *
 * and, on the national network alone, latest of every tube, and the requests per second of the year
 * and of latest at 4 connections. Disk: the hypertable's bytes (compressed chunks and their indexes)
 * per row, and the whole database's. Last, on both stores, the window of the primary key's rebuild
 * (docs/operations/upgrade.md, "The key with status"), with the chunks of the last UNCOMPRESSED_DAYS
 * decompressed first, as the compression policy leaves them (0: no rebuild).
 *
 *   npm run bench -- scale [TUBES] [YEARS] [WRITERS] [ROUNDS] [UNCOMPRESSED_DAYS]   (1,000, 6, 2, 5, 180)
 *
 * 20,000 tubes × 6 years is 1.05 billion rows. The disk holds the compressed store and, at most,
 * WRITERS chunks uncompressed.
 */
import { Readable } from 'node:stream';
import { connect, type Sql } from '../../src/db/connect.js';
import { seriesSelect } from '../../src/engine/read/selects.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { numberArguments } from '../../testkit/arguments.js';
import { addKey } from '../../testkit/fixtures.js';
import { migrateAlone } from '../../testkit/postgres.js';
import { requirePrerequisites } from '../../testkit/prerequisites.js';
import { appendAuto } from '../../testkit/replication.js';
import { count, loadLine, machineLine, median, ms, printTable, spread } from '../../testkit/report.js';
import { nativeTimescale, startTimescale } from '../../testkit/timescale.js';
import { CHUNK_MS, type ChunkWritten, HOUR_MS, writeHistory } from '../lib/historyWriter.js';
import { timedGet } from '../lib/http.js';
import { type ServerProcess, startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([nativeTimescale]);

const [TUBES, YEARS, WRITERS, ROUNDS, UNCOMPRESSED_DAYS] = numberArguments(1000, 6, 2, 5, 180);
const REQUESTS = 5;
const REFERENCE_ROWS = 10_000_000;
const DELTA_TUBES = 100;
const DELTA_HOURS = 10;
const DAY_MS = 86_400_000;

/** The history ends at the chunk boundary before 2026: its last chunk provisional, the rest approved. */
const CHUNKS = Math.round((YEARS * 365.25 * DAY_MS) / CHUNK_MS);
const END = Math.floor(Date.parse('2026-01-01T00:00:00Z') / CHUNK_MS) * CHUNK_MS;
const FROM = END - CHUNKS * CHUNK_MS;
const ROWS_PER_TUBE = (CHUNKS * CHUNK_MS) / HOUR_MS;
const REFERENCE_TUBES = Math.ceil(REFERENCE_ROWS / ROWS_PER_TUBE);
const instant = (at: number) => new Date(at).toISOString().replace('.000Z', 'Z');
/** A year of 366 days in compressed, approved history, a month before its end. */
const YEAR = { from: instant(END - 400 * DAY_MS), to: instant(END - 34 * DAY_MS) };

/** While the history is written: room for sorts and index builds, no checkpoint in the middle. */
const LOAD_SETTINGS = {
  wal_level: 'minimal',
  max_wal_senders: '0',
  shared_buffers: '1GB',
  work_mem: '256MB',
  maintenance_work_mem: '512MB',
  max_wal_size: '16GB',
  checkpoint_timeout: '30min',
};

interface Store {
  name: string;
  url: string;
  sql: Sql;
  tubes: number;
  rows: number;
  loadMs: number;
  latestMs: number;
  vacuumMs: number;
  compressMs: number;
  writtenRows: number;
}

const databaseUrl = (server: string, name: string) => {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
};

/** A migrated database on the server, its registry, its history compressed, latest_measurements. */
async function addStore(server: Sql, serverUrl: string, name: string, tubes: number): Promise<Store> {
  await server.unsafe(`create database ${name}`);
  const url = databaseUrl(serverUrl, name);
  await migrateAlone(url);
  const sql = connect(url, { max: 2, applicationName: 'gwapi bench scale' });
  const wells = Math.ceil(tubes / 2);
  await sql`
    insert into wells (name, longitude, latitude)
    select 'Well ' || i, 3.3 + (i % 200) * 0.018, 50.7 + (i / 200) * 0.005 from generate_series(1, ${wells}) i`;
  await sql`
    insert into tubes (identifier, well_id, number)
    select gen_random_uuid(), w.id, n::text from wells w, generate_series(1, 2) n
    order by w.id, n limit ${tubes}`;
  const [ids] = await sql<{ first: number; last: number }[]>`
    select min(id) as first, max(id) as last from tubes`;
  if (ids!.last - ids!.first + 1 !== tubes) throw new Error(`${name}: tube ids are not contiguous`);
  // The policy's job would compress the chunks being written, under the writers' feet.
  await sql`select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
            where proc_name = 'compress_measurements'`;

  let started = performance.now();
  let written = 0;
  let compressMs = 0;
  const report = (chunk: ChunkWritten) => {
    written += chunk.rows;
    compressMs += chunk.compressMs;
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `  ${name}: chunk ${chunk.chunk + 1}/${CHUNKS}, ${count(chunk.rows)} rows: fill ${ms(chunk.fillMs)}, ` +
        `attach ${ms(chunk.attachMs)}, compress ${ms(chunk.compressMs)}; ` +
        `${count(written)} rows in ${seconds.toFixed(0)} s (${count(written / seconds)}/s)`,
    );
  };
  await writeHistory(
    url,
    {
      firstTube: ids!.first,
      lastTube: ids!.last,
      from: FROM,
      chunks: CHUNKS,
      provisionalFrom: END - CHUNK_MS,
    },
    WRITERS,
    report,
  );
  const loadMs = performance.now() - started;

  started = performance.now();
  await sql`
    insert into latest_measurements (tube_id, status, observed_at, value)
    select distinct on (tube_id, status) tube_id, status, observed_at, measurement_value(value, value_thousandths)
    from measurements where observed_at >= ${instant(END - CHUNK_MS - DAY_MS)}
    order by tube_id, status, observed_at desc`;
  const latestMs = performance.now() - started;
  started = performance.now();
  await sql`vacuum analyze`;
  const vacuumMs = performance.now() - started;
  await sql`select alter_job(job_id, scheduled => true) from timescaledb_information.jobs
            where proc_name = 'compress_measurements'`;
  return {
    name,
    url,
    sql,
    tubes,
    rows: tubes * ROWS_PER_TUBE,
    loadMs,
    latestMs,
    vacuumMs,
    compressMs,
    writtenRows: written,
  };
}

/** What a store occupies: the hypertable (compressed chunks, their indexes), and the whole database. */
async function sizes(store: Store) {
  const [size] = await store.sql<
    { hypertable: string; database: string; chunks: number; compressed: number; uncompressed: string }[]
  >`
    select hypertable_size('measurements')::int8 as hypertable,
           pg_database_size(current_database())::int8 as database,
           (select count(*)::int from timescaledb_information.chunks where hypertable_name = 'measurements') as chunks,
           (select count(*)::int from timescaledb_information.chunks
            where hypertable_name = 'measurements' and is_compressed) as compressed,
           (select before_compression_total_bytes::int8 from hypertable_compression_stats('measurements'))
             as uncompressed`;
  return {
    hypertable: Number(size!.hypertable),
    database: Number(size!.database),
    uncompressed: Number(size!.uncompressed),
    chunks: size!.chunks,
    compressed: size!.compressed,
  };
}

interface Reader {
  store: Store;
  api: ServerProcess;
  key: string;
  allKey: string;
  seriesPath: string;
  latestPath: string;
  discoveryPath: string;
  deltaPath: string;
  deltaRows: number;
  importMs: number;
  planningSelect: string;
}

const DELTA_WINDOW = `from=${instant(END - DAY_MS)}&to=${instant(END + DAY_MS)}`;

/** The key of the reference's tubes, the paths, and the delta: token, import, then changedSince. */
async function prepareReader(store: Store): Promise<Reader> {
  const tubes = await store.sql<{ id: number; identifier: string }[]>`
    select id, identifier from tubes order by id limit ${REFERENCE_TUBES}`;
  const { key } = await addKey(store.sql, { tubeIds: tubes.map((t) => t.id) });
  const { key: allKey } = await addKey(store.sql, { allTubes: true });
  const api = await startServerProcess('api', store.url);
  const headers = { 'x-api-key': key };
  const middle = tubes[Math.floor(tubes.length / 2)]!;
  const deltaTubes = tubes.slice(0, DELTA_TUBES);
  const network = `${api.base}/v1/groundwater-monitoring-measurements?${DELTA_WINDOW}&tubes=${deltaTubes
    .map((t) => t.identifier)
    .join(',')}`;
  const before = await timedGet(network, headers);
  const token = before.headers['sync-token'];
  if (before.status !== 200 || typeof token !== 'string') throw new Error(`${store.name}: no sync token`);
  const lines = deltaTubes.flatMap((tube) =>
    Array.from(
      { length: DELTA_HOURS },
      (_, hour) => `${tube.identifier},${instant(END + hour * HOUR_MS)},${(-1 + hour / 1000).toFixed(3)}`,
    ),
  );
  const started = performance.now();
  await importMeasurements(
    store.sql,
    Readable.from([`tubeIdentifier,observedAt,value\n${lines.join('\n')}\n`]),
    {
      name: 'delta.csv',
    },
  );
  const importMs = performance.now() - started;
  const deltaPath = `${network}&changedSince=${token}`;
  const delta = await timedGet(deltaPath, headers, true);
  const deltaRows = (
    JSON.parse(delta.body!.toString()) as { series: { measurements: unknown[] }[] }
  ).series.reduce((sum, series) => sum + series.measurements.length, 0);
  if (deltaRows !== lines.length) throw new Error(`${store.name}: the delta holds ${deltaRows} rows`);
  return {
    store,
    api,
    key,
    allKey,
    seriesPath: `${api.base}/v1/groundwater-monitoring-tubes/${middle.identifier}/measurements?from=${YEAR.from}&to=${YEAR.to}`,
    latestPath: `${api.base}/v1/groundwater-monitoring-measurements/latest`,
    discoveryPath: `${api.base}/v1/groundwater-monitoring-wells`,
    deltaPath,
    deltaRows,
    importMs,
    planningSelect: seriesSelect(middle.id, YEAR.from, YEAR.to),
  };
}

/** Planning Time of EXPLAIN (without running the select), ms. */
async function planningMs(sql: Sql, select: string): Promise<number> {
  const plan = await sql.unsafe<{ 'QUERY PLAN': string }[]>(`explain (summary on) ${select}`);
  const line = plan.map((row) => row['QUERY PLAN']).find((text) => text.startsWith('Planning Time'));
  return Number(/([\d.]+) ms/.exec(line ?? '')?.[1]);
}

type Query = { name: string; goal: string; time: (reader: Reader) => Promise<number> };

const httpQuery = (name: string, goal: string, path: (reader: Reader) => string): Query => ({
  name,
  goal,
  time: async (reader) => {
    const timed = await timedGet(path(reader), { 'x-api-key': reader.key });
    if (timed.status !== 200) throw new Error(`${name} on ${reader.store.name}: ${timed.status}`);
    return timed.totalMs;
  },
});

const QUERIES: Query[] = [
  httpQuery('a year of one tube (JSON)', '≤ 1.2×', (r) => r.seriesPath),
  httpQuery('latest of the key’s tubes', '≤ 1.2×', (r) => r.latestPath),
  httpQuery('discovery of the key’s wells', '', (r) => r.discoveryPath),
  httpQuery('a delta of 1,000 rows', '', (r) => r.deltaPath),
  { name: 'planning a 366-day select', goal: '', time: (r) => planningMs(r.store.sql, r.planningSelect) },
];

/** Medians per query and reader over rounds of REQUESTS, the two readers by turns; per-round ratios. */
async function compare(reference: Reader, national: Reader) {
  const times = new Map<string, number[]>();
  const ratios = new Map<string, number[]>();
  for (let round = -1; round < ROUNDS; round++) {
    for (const query of QUERIES) {
      const roundTimes = new Map<Reader, number[]>();
      for (let i = 0; i < REQUESTS; i++) {
        for (const reader of (round + i) % 2 === 0 ? [reference, national] : [national, reference]) {
          roundTimes.set(reader, [...(roundTimes.get(reader) ?? []), await query.time(reader)]);
        }
      }
      if (round < 0) continue;
      for (const [reader, values] of roundTimes) {
        const at = `${query.name}|${reader.store.name}`;
        times.set(at, [...(times.get(at) ?? []), ...values]);
      }
      ratios.set(query.name, [
        ...(ratios.get(query.name) ?? []),
        median(roundTimes.get(national)!) / median(roundTimes.get(reference)!),
      ]);
    }
  }
  printTable(
    ['request', `${count(reference.store.rows)} rows`, `${count(national.store.rows)} rows`, 'ratio', 'goal'],
    QUERIES.map((query) => [
      query.name,
      ms(median(times.get(`${query.name}|${reference.store.name}`)!)),
      ms(median(times.get(`${query.name}|${national.store.name}`)!)),
      spread(ratios.get(query.name)!),
      query.goal,
    ]),
  );
}

/** Requests per second of `path` at `connections` connections for `seconds`, each response read whole. */
async function throughput(path: string, key: string, connections: number, seconds: number) {
  let requests = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const timed = await timedGet(path, { 'x-api-key': key });
        if (timed.status !== 200) throw new Error(`${path}: ${timed.status}`);
        requests++;
      }
    }),
  );
  return requests / seconds;
}

/**
 * The key built again as an upgraded database builds it, over what the policy leaves uncompressed: the
 * chunks of the last UNCOMPRESSED_DAYS decompressed (timed apart: the policy never compressed them), then
 * the key dropped and added in one statement, under the ACCESS EXCLUSIVE that is the upgrade's window.
 */
async function rebuildKey(store: Store) {
  const cutoff = instant(END - UNCOMPRESSED_DAYS * DAY_MS);
  let started = performance.now();
  const [decompressed] = await store.sql<{ chunks: number }[]>`
    select count(decompress_chunk(chunk, if_compressed => true))::int as chunks
    from show_chunks('measurements', newer_than => ${cutoff}::timestamptz) chunk`;
  const decompressMs = performance.now() - started;
  const [rows] = await store.sql<{ rows: number }[]>`
    select count(*)::float8 as rows from measurements where observed_at >= ${cutoff}`;
  await store.sql`analyze measurements`;
  const [key] = await store.sql<{ definition: string }[]>`
    select pg_get_constraintdef(oid) as definition from pg_constraint where conname = 'measurements_pkey'`;
  started = performance.now();
  await store.sql.unsafe(
    `alter table measurements drop constraint measurements_pkey, add constraint measurements_pkey ${key!.definition}`,
  );
  return {
    chunks: decompressed!.chunks,
    rows: rows!.rows,
    decompressMs,
    rebuildMs: performance.now() - started,
    key: key!.definition,
  };
}

console.log(`Scale — ${await machineLine()}; ${await loadLine()}\n`);
console.log(
  `${count(TUBES)} tubes × ${CHUNKS} chunks of 30 days (${instant(FROM)} – ${instant(END)}), hourly: ` +
    `${count(TUBES * ROWS_PER_TUBE)} rows, against ${count(REFERENCE_TUBES)} tubes: ` +
    `${count(REFERENCE_TUBES * ROWS_PER_TUBE)} rows; ${WRITERS} writers\n`,
);
const timescale = await startTimescale({ settings: LOAD_SETTINGS });
const readers: Reader[] = [];
const stores: Store[] = [];
try {
  const server = connect(timescale.url, { max: 1, applicationName: 'gwapi bench scale' });
  try {
    stores.push(await addStore(server, timescale.url, 'scale_reference', REFERENCE_TUBES));
    stores.push(await addStore(server, timescale.url, 'scale_national', TUBES));
  } finally {
    await server.end();
  }
  console.log();
  printTable(
    ['store', 'rows', 'written', 'rows/s', 'of it compressing', 'latest_measurements', 'vacuum analyze'],
    stores.map((store) => [
      store.name,
      count(store.writtenRows),
      `${(store.loadMs / 1000).toFixed(0)} s`,
      count(store.writtenRows / (store.loadMs / 1000)),
      `${((store.compressMs / WRITERS / store.loadMs) * 100).toFixed(0)} %`,
      `${(store.latestMs / 1000).toFixed(1)} s`,
      `${(store.vacuumMs / 1000).toFixed(1)} s`,
    ]),
  );
  printTable(
    [
      'store',
      'chunks (compressed)',
      'hypertable',
      'bytes/row',
      'uncompressed would be',
      'database',
      'bytes/row',
    ],
    await Promise.all(
      stores.map(async (store) => {
        const size = await sizes(store);
        return [
          store.name,
          `${size.chunks} (${size.compressed})`,
          `${(size.hypertable / 2 ** 30).toFixed(2)} GiB`,
          (size.hypertable / store.writtenRows).toFixed(2),
          `${(size.uncompressed / 2 ** 30).toFixed(2)} GiB`,
          `${(size.database / 2 ** 30).toFixed(2)} GiB`,
          (size.database / store.writtenRows).toFixed(2),
        ];
      }),
    ),
  );

  // The service reads as production runs it: WAL for standbys.
  for (const store of stores) await store.sql.end();
  await appendAuto(timescale.node, { wal_level: 'replica', max_wal_senders: '10' });
  await timescale.node.stop();
  await timescale.node.start();
  for (const store of stores)
    store.sql = connect(store.url, { max: 2, applicationName: 'gwapi bench scale' });

  for (const store of stores) readers.push(await prepareReader(store));
  const [reference, national] = readers as [Reader, Reader];
  console.log(
    `Import of the delta's ${count(national.deltaRows)} rows (a new chunk): ` +
      readers.map((r) => `${r.store.name} ${ms(r.importMs)}`).join(', ') +
      `\n${ROUNDS} rounds of ${REQUESTS} requests of each, by turns; ${await loadLine()}\n`,
  );
  await compare(reference, national);

  const latestAll = [];
  for (let i = 0; i < 2 * REQUESTS; i++) {
    const timed = await timedGet(national.latestPath, { 'x-api-key': national.allKey });
    if (timed.status !== 200) throw new Error(`latest of every tube: ${timed.status}`);
    latestAll.push(timed.totalMs);
  }
  console.log(`Latest of every tube of ${national.store.name} (${count(TUBES)}): ${ms(median(latestAll))}\n`);
  printTable(
    [`${national.store.name}, 4 connections`, 'requests/s'],
    [
      ['a year of one tube (JSON)', (await throughput(national.seriesPath, national.key, 4, 10)).toFixed(1)],
      ['latest of the key’s tubes', (await throughput(national.latestPath, national.key, 4, 10)).toFixed(1)],
    ],
  );
  console.log(await loadLine());

  if (UNCOMPRESSED_DAYS > 0) {
    for (const reader of readers.splice(0)) await reader.api.stop();
    const rebuilt = [];
    for (const store of stores) rebuilt.push({ store, ...(await rebuildKey(store)) });
    console.log(`\nThe key's rebuild: ${rebuilt[0]!.key}, the last ${UNCOMPRESSED_DAYS} days uncompressed`);
    printTable(
      ['store', 'chunks decompressed', 'rows in them', 'decompressing', 'the key rebuilt'],
      rebuilt.map((r) => [
        r.store.name,
        String(r.chunks),
        count(r.rows),
        `${(r.decompressMs / 1000).toFixed(1)} s`,
        `${(r.rebuildMs / 1000).toFixed(1)} s`,
      ]),
    );
    console.log(await loadLine());
  }
} finally {
  for (const reader of readers) await reader.api.stop();
  for (const store of stores) await store.sql.end();
  await timescale.stop();
}

/**
 * One-off measurement for decision 0022: how `measurements.value` could be stored on native TimescaleDB,
 * its bytes a row compressed, its read and write costs, and a migration on compressed chunks.
 * Run: node --import tsx bench/valueStorage.ts [ROUNDS]
 */
import type { Readable } from 'node:stream';
import { connect, type Sql } from '../src/db/connect.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { loadLine, median, printTable, quartiles, ratio } from '../testkit/report.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const SHRINK = Number(process.argv[3] ?? 1);
/** VALUE_CANDIDATES=0,2: only those of CANDIDATES, by index; VALUE_DATASETS=hourly,minute likewise. */
const ONLY = process.env.VALUE_CANDIDATES?.split(',').map(Number);
const ONLY_DATASETS = process.env.VALUE_DATASETS?.split(',');

/** The scale scenario's level (bench/lib/historyWriter.ts), `h` in hours, rounded to 10^-digits m. */
const level = (digits: number, noise = 0.004) => `round((
    -1.5 + (t * 7919::int8 % 400)::float8 / 100
    + (0.25 + (t * 104729::int8 % 100)::float8 / 100) * sin(2 * pi() * h / 8766 + t)
    + 0.08 * sin(2 * pi() * h / 552 + t * 0.7)
    + (t % 7 - 3) * 0.02 * h / 8766
    + (random() - 0.5) * ${noise}
  )::numeric, ${digits})::float8`;

interface Dataset {
  name: string;
  tubes: number;
  stepMinutes: number;
  digits: number;
}
const DATASETS: Dataset[] = [
  { name: 'hourly', tubes: 200 / SHRINK, stepMinutes: 60, digits: 3 },
  { name: 'minute', tubes: Math.max(1, 10 / SHRINK), stepMinutes: 1, digits: 3 },
  { name: 'hourly4', tubes: 200 / SHRINK, stepMinutes: 60, digits: 4 },
];
const YEAR_FROM = '2024-01-01T00:00:00Z';
const YEAR_TO = '2025-01-01T00:00:00Z';

interface Candidate {
  name: string;
  columns: string;
  /** The stored columns, in order, from the double `v`. */
  encode: (v: string) => string;
  /** The double read back. */
  decode: string;
  chunkDays?: number;
  segmentby?: string;
  orderby?: string;
  datasets?: string[];
}

/** Stores v as v × 10^k in `type` when that reads back as the same double (and is not −0), else as v. */
const scaled = (type: 'int8' | 'int4', k: number): Pick<Candidate, 'columns' | 'encode' | 'decode'> => {
  const scale = 10 ** k;
  const fits = (v: string) =>
    `(round(${v} * ${scale}) / ${scale} = ${v} and not (${v} = 0 and ${v}::text = '-0')` +
    (type === 'int4' ? ` and abs(round(${v} * ${scale})) < 2147483648)` : ')');
  return {
    columns: `value_scaled ${type}, value_other float8, check ((value_scaled is null) <> (value_other is null))`,
    encode: (v) =>
      `case when ${fits(v)} then round(${v} * ${scale})::${type} end, case when not ${fits(v)} then ${v} end`,
    decode: `coalesce(value_scaled::float8 / ${scale}, value_other)`,
  };
};

const CANDIDATES: Candidate[] = [
  { name: 'float8', columns: 'value float8 not null', encode: (v) => v, decode: 'value' },
  {
    name: 'numeric',
    columns: 'value numeric not null',
    encode: (v) => `${v}::numeric`,
    decode: 'value::float8',
    datasets: ['hourly', 'minute'],
  },
  { name: 'int8 ×10^3 + float8', ...scaled('int8', 3) },
  { name: 'int4 ×10^3 + float8', ...scaled('int4', 3), datasets: ['hourly', 'minute'] },
  { name: 'int8 ×10^6 + float8', ...scaled('int8', 6), datasets: ['hourly', 'minute'] },
  {
    name: 'float8, 120-day chunks',
    columns: 'value float8 not null',
    encode: (v) => v,
    decode: 'value',
    chunkDays: 120,
    datasets: ['hourly', 'minute'],
  },
  {
    name: 'int8 ×10^3, 120-day chunks',
    ...scaled('int8', 3),
    chunkDays: 120,
    datasets: ['hourly', 'minute'],
  },
  {
    name: 'float8, not segmented',
    columns: 'value float8 not null',
    encode: (v) => v,
    decode: 'value',
    segmentby: '',
    orderby: 'tube_id, observed_at',
    datasets: ['hourly'],
  },
];

const tableOf = (dataset: Dataset, index: number) => `v_${dataset.name}_${index}`;
const valueColumns = (candidate: Candidate) =>
  candidate.columns.startsWith('value float8') || candidate.columns.startsWith('value numeric')
    ? 'value'
    : 'value_scaled, value_other';

async function fill(sql: Sql, dataset: Dataset): Promise<number> {
  const staging = `staging_${dataset.name}`;
  await sql.unsafe(`select setseed(0.36)`);
  await sql.unsafe(`create table ${staging} as
    select t::int4 as tube_id, ${`'${YEAR_FROM}'::timestamptz`} + make_interval(mins => (h * 60)::int4) as observed_at,
           ${level(dataset.digits)} as value, (case when h >= 6000 then 1 else 0 end)::int2 as status
    from generate_series(1, ${dataset.tubes}) t,
         lateral generate_series(0, 8783 * 60 / ${dataset.stepMinutes}) m,
         lateral (select m * ${dataset.stepMinutes}::float8 / 60 as h) hours
    order by t, m`);
  const [row] = await sql.unsafe<{ rows: string }[]>(`select count(*)::int8 as rows from ${staging}`);
  return Number(row!.rows);
}

async function createCandidate(sql: Sql, table: string, candidate: Candidate) {
  const columns = valueColumns(candidate);
  await sql.unsafe(`create table ${table} (tube_id int4 not null, observed_at timestamptz not null,
    ${candidate.columns}, status int2 not null default 1,
    primary key (tube_id, observed_at) include (${columns}, status))`);
  await sql.unsafe(
    `select create_hypertable('${table}', by_range('observed_at', interval '${candidate.chunkDays ?? 30} days'))`,
  );
  await sql.unsafe(`alter table ${table} set (timescaledb.compress,
    timescaledb.compress_segmentby = '${candidate.segmentby ?? 'tube_id'}',
    timescaledb.compress_orderby = '${candidate.orderby ?? 'observed_at'}')`);
}

async function bytesOf(sql: Sql, table: string) {
  const [row] = await sql.unsafe<
    { bytes: number; chunks: number }[]
  >(`select hypertable_size('${table}')::float8 as bytes,
      (select count(*) from timescaledb_information.chunks where hypertable_name = '${table}')::int as chunks`);
  return row!;
}

/** Bytes of each compressed column a row, from the compressed chunks' own rows. */
async function columnBytes(sql: Sql, table: string, columns: string[], rows: number) {
  const chunks = await sql.unsafe(`select format('%I.%I', c.schema_name, c.table_name) as name
    from _timescaledb_catalog.chunk c join _timescaledb_catalog.chunk p on p.compressed_chunk_id = c.id
    join _timescaledb_catalog.hypertable h on h.id = p.hypertable_id where h.table_name = '${table}'`);
  const sums: Record<string, number> = {};
  for (const { name } of chunks) {
    const [row] = await sql.unsafe(
      `select ${columns.map((column) => `coalesce(sum(pg_column_size(${column})), 0)::float8 as "${column}"`).join(', ')} from ${name}`,
    );
    for (const column of columns) sums[column] = (sums[column] ?? 0) + Number(row![column]);
  }
  return Object.fromEntries(columns.map((column) => [column, (sums[column]! / rows).toFixed(2)]));
}

async function copyBytes(sql: Sql, select: string): Promise<number> {
  const stream: Readable = await sql.unsafe(`copy (${select}) to stdout (format binary)`).readable();
  let bytes = 0;
  for await (const chunk of stream) bytes += (chunk as Buffer).length;
  return bytes;
}

const timed = async (work: () => Promise<unknown>) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

class Rollback extends Error {}
const rolledBack = async (sql: Sql, work: (tx: Sql) => Promise<unknown>) => {
  let elapsed = 0;
  await sql
    .begin(async (tx) => {
      // As the service's writes do (src/db/transaction.ts).
      await tx.unsafe('set local timescaledb.max_tuples_decompressed_per_dml_transaction = 0');
      elapsed = await timed(() => work(tx as unknown as Sql));
      throw new Rollback();
    })
    .catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return elapsed;
};

async function main() {
  const server = await startDatabaseServer({}, 'timescaledb');
  console.log(server.description, '|', await loadLine());
  const { sql, url } = await server.database('value_storage');
  await sql.unsafe(`set jit = off`);
  const storage: string[][] = [];
  const made = new Map<string, { table: string; candidate: Candidate }[]>();
  for (const dataset of DATASETS) {
    if (ONLY_DATASETS && !ONLY_DATASETS.includes(dataset.name)) continue;
    let started = performance.now();
    const rows = await fill(sql, dataset);
    console.log(
      `${dataset.name}: ${rows} rows staged in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const tables: { table: string; candidate: Candidate }[] = [];
    for (const [index, candidate] of CANDIDATES.entries()) {
      if (candidate.datasets && !candidate.datasets.includes(dataset.name)) continue;
      if (ONLY && !ONLY.includes(index)) continue;
      const table = tableOf(dataset, index);
      started = performance.now();
      await createCandidate(sql, table, candidate);
      await sql.unsafe(`insert into ${table} (tube_id, observed_at, ${valueColumns(candidate)}, status)
        select tube_id, observed_at, ${candidate.encode('value')}, status from staging_${dataset.name}`);
      const filled = performance.now() - started;
      const uncompressed = await bytesOf(sql, table);
      started = performance.now();
      await sql.unsafe(`select compress_chunk(c) from show_chunks('${table}') c`);
      const compressMs = performance.now() - started;
      await sql.unsafe(`vacuum analyze ${table}`);
      const compressed = await bytesOf(sql, table);
      // Every row reads back as the same double, so it prints as the same decimal.
      const [check] = await sql.unsafe(`select count(*) filter (where d.value is distinct from s.value
              or d.value::text <> s.value::text)::int as differ,
            ${valueColumns(candidate) === 'value' ? '0' : 'count(*) filter (where d.scaled is null)'}::int as fallback
          from staging_${dataset.name} s join
            (select tube_id, observed_at, ${candidate.decode} as value
                    ${valueColumns(candidate) === 'value' ? '' : ', value_scaled as scaled'} from ${table}) d
            using (tube_id, observed_at)`);
      const columns = await columnBytes(
        sql,
        table,
        [...valueColumns(candidate).split(', '), 'observed_at', 'status', 'tube_id', '_ts_meta_count'],
        rows,
      );
      storage.push([
        dataset.name,
        candidate.name,
        (compressed.bytes / rows).toFixed(2),
        (uncompressed.bytes / rows).toFixed(1),
        Object.entries(columns)
          .map(([column, bytes]) => `${column} ${bytes}`)
          .join(', '),
        `${check!.differ} / ${check!.fallback}`,
        `${compressed.chunks}`,
        `${(filled / 1000).toFixed(1)} s + ${(compressMs / 1000).toFixed(1)} s`,
      ]);
      console.log(storage.at(-1)!.join(' | '));
      tables.push({ table, candidate });
    }
    made.set(dataset.name, tables);
  }
  console.log(`\nBytes a row compressed (${await loadLine()})`);
  printTable(
    [
      'data',
      'candidate',
      'bytes/row',
      'uncompressed',
      'per column (compressed)',
      'differ / fallback',
      'chunks',
      'fill + compress',
    ],
    storage,
  );

  // Reads and writes, the candidates by turns in each round.
  const reads = connect(url, { max: 1, applicationName: 'value storage reads' });
  await reads`set jit = off`;
  const compared = (dataset: string) =>
    made.get(dataset)!.filter(({ candidate }) => candidate.segmentby === undefined);
  const times = new Map<string, number[]>();
  const note = (key: string, elapsed: number) => times.set(key, [...(times.get(key) ?? []), elapsed]);
  const range = `observed_at >= '${YEAR_FROM}' and observed_at < '${YEAR_TO}'`;
  for (let round = 0; round < ROUNDS; round++) {
    for (const dataset of ['hourly', 'minute']) {
      const tubes = DATASETS.find((d) => d.name === dataset)!.tubes;
      for (const { table, candidate } of compared(dataset)) {
        const key = (what: string) => `${dataset}|${what}|${candidate.name}`;
        note(
          key('a year of one tube'),
          await timed(() =>
            copyBytes(
              reads,
              `select observed_at, ${candidate.decode} as value, status from ${table}
              where tube_id = 7 and ${range} order by observed_at`,
            ),
          ),
        );
        note(
          key('a network year'),
          await timed(() =>
            copyBytes(
              reads,
              `select t.id, m.observed_at, m.value from generate_series(1, ${tubes}) t(id),
              lateral (select observed_at, ${candidate.decode} as value from ${table}
                       where tube_id = t.id and ${range} order by observed_at) m`,
            ),
          ),
        );
        note(
          key('days of a year (P1D from rows)'),
          await timed(() =>
            copyBytes(
              reads,
              `select time_bucket('1 day', observed_at) as day, count(*), min(v), max(v),
                avg(v order by observed_at) from (select observed_at, ${candidate.decode} as v from ${table}
                where tube_id = 7 and ${range}) m group by 1 order by 1`,
            ),
          ),
        );
        note(
          key('newest of every tube'),
          await timed(() =>
            copyBytes(
              reads,
              `select t.id, m.* from generate_series(1, ${tubes}) t(id),
              lateral (select observed_at, ${candidate.decode} as value from ${table} where tube_id = t.id
                       order by observed_at desc limit 1) m`,
            ),
          ),
        );
        if (dataset !== 'hourly') continue;
        const columns = valueColumns(candidate);
        const updates = columns.split(', ').map((column) => `${column} = excluded.${column}`);
        note(
          key('import a new day (4,800 rows)'),
          await rolledBack(reads, (tx) =>
            tx.unsafe(`insert into ${table} (tube_id, observed_at, ${columns}, status)
              select tube_id, observed_at + interval '366 days', ${candidate.encode('value')}, status
              from staging_hourly where observed_at >= '2024-03-10' and observed_at < '2024-03-11'`),
          ),
        );
        note(
          key('re-import a day into compressed'),
          await rolledBack(reads, (tx) =>
            tx.unsafe(`insert into ${table} (tube_id, observed_at, ${columns}, status)
              select tube_id, observed_at, ${candidate.encode('(value + 0.001)')}, status
              from staging_hourly where observed_at >= '2024-03-10' and observed_at < '2024-03-11'
              on conflict (tube_id, observed_at) do update set ${updates.join(', ')}`),
          ),
        );
        note(
          key("a month's status of a tube"),
          await rolledBack(reads, (tx) =>
            tx.unsafe(`update ${table} set status = 2 where tube_id = 7
              and observed_at >= '2024-03-01' and observed_at < '2024-04-01'`),
          ),
        );
        note(
          key('a value corrected'),
          await rolledBack(reads, (tx) =>
            tx.unsafe(`update ${table} set (${columns}) = (select ${candidate.encode('12.345::float8')})
              where tube_id = 7 and observed_at = '2024-03-15T12:00:00Z'`),
          ),
        );
      }
    }
    console.log(`round ${round + 1} done (${await loadLine()})`);
  }
  const rows: string[][] = [];
  const groups = new Map<string, Map<string, number[]>>();
  for (const [key, list] of times) {
    const [dataset, what, candidate] = key.split('|');
    const group = `${dataset}: ${what}`;
    if (!groups.has(group)) groups.set(group, new Map());
    groups.get(group)!.set(candidate!, list);
  }
  for (const [group, byCandidate] of groups) {
    const base = byCandidate.get('float8')!;
    for (const [candidate, list] of byCandidate) {
      const ratios = list.map((value, index) => value / base[index]!);
      const [low, high] = quartiles(ratios);
      rows.push([
        group,
        candidate,
        `${median(list).toFixed(1)} ms`,
        `${ratio(median(ratios))} (${ratio(low)}–${ratio(high)})`,
      ]);
    }
  }
  console.log(
    `\nReads and writes, medians of ${ROUNDS} rounds, to float8 round by round (${await loadLine()})`,
  );
  printTable(['what', 'candidate', 'median', 'to float8 (quartiles)'], rows, [0, 1]);
  await reads.end();
  await server.stop();
}

await main();

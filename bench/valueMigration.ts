/**
 * One-off measurement for decision 0022: moving `measurements.value` of a filled, migrated hypertable
 * with compressed chunks to a scaled integer, online, while a reader of the release before reads `value`.
 * Run: node --import tsx bench/valueMigration.ts [TUBES]
 */
import { connect, type Sql } from '../src/db/connect.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { loadLine } from '../testkit/report.js';

const TUBES = Number(process.argv[2] ?? 200);
const FITS = `round(value * 1000) / 1000 = value and not (value = 0 and value::text = '-0')`;

/** A transaction per 50 tubes of a chunk: within TimescaleDB's default bound on rows decompressed by one. */
async function byTubes(work: (condition: string) => Promise<unknown>) {
  for (let first = 1; first <= TUBES; first += 50) await work(`tube_id between ${first} and ${first + 49}`);
}

const timed = async (work: () => Promise<unknown>) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/** Reads one tube's month from `chunk`'s range in a loop, each under lock_timeout; the slowest, and failures. */
function reader(url: string, from: string, to: string) {
  const sql = connect(url, { max: 1, applicationName: 'the release before' });
  let stop = false;
  let slowest = 0;
  let failures = 0;
  let reads = 0;
  let nulls = 0;
  const loop = (async () => {
    await sql`set lock_timeout = '2s'`;
    while (!stop) {
      const tube = 1 + (reads % TUBES);
      try {
        const elapsed = await timed(async () => {
          const [row] = await sql`select count(*)::int as rows, count(value)::int as valued from measurements
            where tube_id = ${tube} and observed_at >= ${from} and observed_at < ${to}`;
          nulls += row!.rows - row!.valued;
        });
        slowest = Math.max(slowest, elapsed);
      } catch (error) {
        failures++;
        console.log(`  reader: ${(error as Error).message}`);
      }
      reads++;
    }
  })();
  return {
    async end() {
      stop = true;
      await loop;
      await sql.end();
      return { slowest, failures, reads, nulls };
    },
  };
}

const bytesARow = async (sql: Sql) => {
  const [row] =
    await sql`select hypertable_size('measurements')::float8 / (select count(*) from measurements) as bytes`;
  return row!.bytes.toFixed(2);
};

async function main() {
  const server = await startDatabaseServer({}, 'timescaledb');
  console.log(server.description, '|', await loadLine());
  const { sql, url } = await server.database('value_migration');
  await sql`set jit = off`;
  await sql.unsafe(`insert into measurements (tube_id, observed_at, value, status)
    select t, '2024-01-01T00:00:00Z'::timestamptz + make_interval(hours => h), round((
      -1.5 + (t * 7919::int8 % 400)::float8 / 100
      + (0.25 + (t * 104729::int8 % 100)::float8 / 100) * sin(2 * pi() * h / 8766 + t)
      + 0.08 * sin(2 * pi() * h / 552 + t * 0.7)
      + (t % 7 - 3) * 0.02 * h / 8766
      + (random() - 0.5) * 0.004)::numeric, 3)::float8, 0
    from generate_series(1, ${TUBES}) t, generate_series(0, 8783) h order by t, h`);
  await sql.unsafe(`select compress_chunk(c) from show_chunks('measurements') c`);
  await sql`vacuum analyze measurements`;
  console.log(`filled and compressed: ${await bytesARow(sql)} bytes a row`);

  const ddl = connect(url, { max: 1, applicationName: 'gwapi migrate' });
  await ddl`set lock_timeout = '2s'`;
  for (const statement of [
    'alter table measurements add column if not exists value_scaled int8',
    'alter table measurements alter column value drop not null',
    `alter table measurements add constraint measurements_value_stored
       check (value is not null or value_scaled is not null) not valid`,
  ]) {
    try {
      console.log(`${statement.split('\n')[0]}: ${(await timed(() => ddl.unsafe(statement))).toFixed(0)} ms`);
    } catch (error) {
      console.log(`${statement.split('\n')[0]}: refused: ${(error as Error).message}`);
    }
  }
  await ddl.end();

  const chunks = await sql<{ name: string; from: Date; to: Date }[]>`
    select format('%I.%I', chunk_schema, chunk_name) as name, range_start as from, range_end as to
    from timescaledb_information.chunks where hypertable_name = 'measurements' order by range_start`;
  const worker = connect(url, { max: 1, applicationName: 'value backfill' });
  await worker`set jit = off`;
  await worker`set timescaledb.max_tuples_decompressed_per_dml_transaction = 0`;
  for (const chunk of chunks.slice(1, 4)) {
    const watch = reader(url, chunk.from.toISOString(), chunk.to.toISOString());
    const [{ rows }] = (await worker.unsafe(
      `select count(*)::int as rows from ${chunk.name}`,
    )) as unknown as [{ rows: number }];
    // Step 1, the writes of the new release (value kept for the release before): a correction of every row.
    const fill = await timed(() =>
      byTubes((tubes) =>
        worker.unsafe(
          `update ${chunk.name} set value_scaled = round(value * 1000)::int8 where ${tubes} and ${FITS}`,
        ),
      ),
    );
    const recompress1 = await timed(() => worker.unsafe(`select compress_chunk('${chunk.name}')`));
    // Step 2, once no release before serves: value only where the integer cannot hold it.
    const clear = await timed(() =>
      byTubes((tubes) =>
        worker.unsafe(`update ${chunk.name} set value = null where ${tubes} and value_scaled is not null`),
      ),
    );
    const recompress2 = await timed(() => worker.unsafe(`select compress_chunk('${chunk.name}')`));
    const seen = await watch.end();
    console.log(
      `${chunk.name} (${rows} rows): fill ${fill.toFixed(0)} ms + recompress ${recompress1.toFixed(0)} ms; ` +
        `clear ${clear.toFixed(0)} ms + recompress ${recompress2.toFixed(0)} ms ` +
        `(${(((fill + recompress1 + clear + recompress2) / rows) * 1e3).toFixed(1)} µs a row); ` +
        `reader: ${seen.reads} reads, slowest ${seen.slowest.toFixed(0)} ms, ${seen.failures} failed, ${seen.nulls} nulls seen`,
    );
  }
  // The rest without the reader, for the bytes.
  for (const chunk of [chunks[0]!, ...chunks.slice(4)]) {
    await byTubes((tubes) =>
      worker.unsafe(
        `update ${chunk.name} set value_scaled = round(value * 1000)::int8, value = null where ${tubes} and ${FITS}`,
      ),
    );
    await worker.unsafe(`select compress_chunk('${chunk.name}')`);
  }
  await worker`vacuum analyze measurements`;
  console.log(`every chunk moved: ${await bytesARow(sql)} bytes a row (${await loadLine()})`);
  try {
    console.log(
      `validate: ${(await timed(() => sql`alter table measurements validate constraint measurements_value_stored`)).toFixed(0)} ms`,
    );
  } catch (error) {
    console.log(`validate: refused: ${(error as Error).message}`);
  }
  await worker.end();
  await server.stop();
}

await main();

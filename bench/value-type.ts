/**
 * Why measurements.value is double precision and not numeric: size on disk and read time of a year of
 * 1-minute values (527,040 rows) stored both ways, and a check that every value comes back as the
 * decimal that was stored. Prints a table. Run: node --import tsx bench/value-type.ts
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../src/db/connect.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';

const ROWS = 527_040;
const RUNS = 5;

const dir = await mkdtemp(join(tmpdir(), 'gwapi-bench-value-'));
await chmod(dir, 0o755);
const server = await startEmbeddedPostgres({ dir: join(dir, 'pg'), persistent: false });
const sql = connect(server.url, { max: 1 });

try {
  for (const type of ['double precision', 'numeric']) {
    const table = type === 'numeric' ? 'v_numeric' : 'v_double';
    await sql.unsafe(`
      create table ${table} (tube_id int not null, observed_at timestamptz not null, value ${type} not null,
                             primary key (tube_id, observed_at) include (value))`);
    // Levels in metres with 3 decimals, like a logger's: -2.000 … +1.999.
    await sql.unsafe(`
      insert into ${table}
      select 1, timestamptz '2024-01-01' + n * interval '1 minute', round(((n::bigint * 7919) % 4000 - 2000) / 1000.0, 3)
      from generate_series(0, ${ROWS - 1}) n`);
    await sql.unsafe(`vacuum analyze ${table}`);
  }
  const mismatches = await sql`
    select count(*)::int as n from v_double d join v_numeric n using (tube_id, observed_at)
    where d.value::text <> trim_scale(n.value)::text`;

  const rows: string[][] = [];
  for (const table of ['v_double', 'v_numeric']) {
    const [size] = await sql.unsafe(`select pg_total_relation_size('${table}') as bytes`);
    const times: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const start = performance.now();
      let count = 0;
      await sql
        .unsafe(`select observed_at::text, value from ${table} where tube_id = 1 order by observed_at`)
        .cursor(5000, (batch) => {
          count += batch.length;
        });
      if (count !== ROWS) throw new Error(`read ${count} rows`);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    rows.push([table, `${(Number(size?.bytes) / 1e6).toFixed(1)} MB`, `${times[RUNS >> 1]?.toFixed(0)} ms`]);
  }
  console.log(
    `value type, ${ROWS.toLocaleString('en')} rows of one tube, median of ${RUNS} reads through postgres.js`,
  );
  console.log('table        size (heap + index)   read');
  for (const [table, size, time] of rows) console.log(`${table!.padEnd(12)} ${size!.padEnd(21)} ${time}`);
  console.log(`values whose double text differs from the decimal: ${mismatches[0]?.n}`);
} finally {
  await sql.end();
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}

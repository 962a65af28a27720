/**
 * Aggregate benchmark: a year of 1-minute data for one tube (527,040 measurements) as the raw series
 * and as its P1D and PT1H aggregates, over real HTTP on loopback: latency, server CPU, and the
 * database's own time for each query (EXPLAIN ANALYZE of the select the cursor runs). Then the plan of
 * the P1D query. Rounds interleave the variants, so drift of the shared machine hits all alike.
 *
 *   npm run bench -- aggregate [ROUNDS]     (DATABASE_URL, or an embedded PostgreSQL)
 */

import { AGGREGATE_SECONDS, type Aggregate } from '../../src/contract.js';
import { aggregateSelect, bucketFunctionOf, seriesSelect } from '../../src/engine/read/selects.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { machineLine, mb, median, ms, printTable, ratio } from '../../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import { timedGet } from '../lib/http.js';
import { startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const ROUNDS = Number(process.argv[2] ?? 7);
const VARIANTS: (Aggregate | undefined)[] = [undefined, 'P1D', 'PT1H'];
const nameOf = (aggregate: Aggregate | undefined) => aggregate ?? 'raw';

const pg = await startDatabaseServer();
try {
  console.log(`Aggregate benchmark — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_aggregate');
  const fixture = await addSeriesFixture(sql);
  const to = dayAfterStart(366);
  const query = (aggregate?: Aggregate) =>
    `?from=${SERIES_START}&to=${to}${aggregate ? `&aggregate=${aggregate}` : ''}`;
  const seriesUrl = (base: string, aggregate?: Aggregate) =>
    `${base}/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements${query(aggregate)}`;
  // Already in the UTC form the route hands to the SQL.
  const from = SERIES_START;

  /** The database's time for the select the COPY runs (without parallel workers, as on a busy server). */
  const databaseMs = (aggregate?: Aggregate) =>
    sql.begin(async (tx) => {
      await tx`set local max_parallel_workers_per_gather = 0`;
      const select = aggregate
        ? aggregateSelect(fixture.tubeId, from, to, {
            bucketFunction: await bucketFunctionOf(sql, tx),
            seconds: AGGREGATE_SECONDS[aggregate],
          })
        : seriesSelect(fixture.tubeId, from, to);
      const [row] = await tx.unsafe(`explain (analyze, format json) ${select}`);
      return (row!['QUERY PLAN'] as { 'Execution Time': number }[])[0]!['Execution Time'];
    });

  const server = await startServerProcess('api', url);
  type Sample = { ms: number; cpuMs: number; bytes: number; dbMs: number };
  const samples = new Map<string, Sample[]>(VARIANTS.map((v) => [nameOf(v), []]));
  try {
    for (let round = -1; round < ROUNDS; round++) {
      for (const aggregate of VARIANTS) {
        const before = server.cpuMs();
        const response = await timedGet(seriesUrl(server.base, aggregate), { 'x-api-key': fixture.key });
        if (response.status !== 200) throw new Error(`${nameOf(aggregate)}: ${response.status}`);
        const cpuMs = server.cpuMs() - before;
        const dbMs = await databaseMs(aggregate);
        // Round -1 warms up.
        if (round >= 0)
          samples.get(nameOf(aggregate))!.push({ ms: response.totalMs, cpuMs, bytes: response.bytes, dbMs });
      }
    }
  } finally {
    await server.stop();
  }
  const medianOf = (name: string, field: keyof Sample) => median(samples.get(name)!.map((s) => s[field]));
  const raw = medianOf('raw', 'ms');
  console.log(`366 days of 1-minute data; median of ${ROUNDS} rounds\n`);
  printTable(
    ['series', 'total', 'server CPU', 'database (EXPLAIN ANALYZE)', 'body', 'vs raw'],
    VARIANTS.map((aggregate) => {
      const name = nameOf(aggregate);
      return [
        name,
        ms(medianOf(name, 'ms')),
        ms(medianOf(name, 'cpuMs')),
        ms(medianOf(name, 'dbMs')),
        mb(medianOf(name, 'bytes') / 1e6),
        ratio(medianOf(name, 'ms') / raw),
      ];
    }),
  );

  const plan = await sql.begin(async (tx) => {
    await tx`set local max_parallel_workers_per_gather = 0`;
    const select = aggregateSelect(fixture.tubeId, from, to, {
      bucketFunction: await bucketFunctionOf(sql, tx),
      seconds: AGGREGATE_SECONDS.P1D,
    });
    return tx.unsafe(`explain (analyze, buffers, costs off, timing off) ${select}`);
  });
  console.log(`\nPlan of the P1D select:\n${plan.map((row) => row['QUERY PLAN']).join('\n')}`);
} finally {
  await pg.stop();
}

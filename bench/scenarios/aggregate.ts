/**
 * Aggregate benchmark: a year of 1-minute data for one tube (527,040 measurements) as the raw JSON series
 * and as its aggregates, over real HTTP on loopback: P1D from a UTC midnight (its days read from the
 * daily rollups), P1D from an hour after one (computed from the rows, as any bucket that is not a UTC
 * day), and PT1H; each as a client sees it (request sent to last byte read). Beside them, in the same rounds, the floor of reading the year's rows at all
 * (`count(*)` and the sum of the values over the index-only scan of the primary key, the least any aggregate of
 * every row costs). For each: the CPU of the server, of its database backends and of this client, and
 * how many cores they kept busy together. Rounds interleave the variants, so drift of the shared machine
 * hits all alike; the table gives medians and the range of the per-round ratios.
 *
 * The raw year is a pipeline of three processes (database, server, client) that overlap on free cores;
 * an aggregate is one database backend. So the ratio of the two depends on how many cores are free:
 * the load average is printed before and after, and a busy machine reads as a better ratio than a quiet
 * one (docs/decisions/0016-aggregate-ratio-and-free-cores.md).
 *
 * On each engine of BENCH_ENGINE (lib/engines.ts), the year compressed on TimescaleDB as its policy
 * leaves it; with both, each figure on TimescaleDB over the same on PostgreSQL (goal: P1D ≤ 1.3×).
 *
 *   npm run bench -- aggregate [ROUNDS]     (DATABASE_URL, or an embedded PostgreSQL; BENCH_ENGINE)
 */

import { AGGREGATE_SECONDS, type Aggregate } from '../../src/contract.js';
import type { Sql } from '../../src/db/connect.js';
import { aggregateSelect, bucketFunctionOf, seriesSelect } from '../../src/engine/read/selects.js';
import { numberArguments } from '../../testkit/arguments.js';
import { loadLine, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import { backendCpuMeter, ownCpuMs } from '../lib/cpu.js';
import { onEachEngine, printEngineRatios, requireEnginePrerequisites } from '../lib/engines.js';
import { timedGet } from '../lib/http.js';
import { SERVER_APPLICATION_NAME } from '../lib/serverProcess.js';

requireEnginePrerequisites();

const [ROUNDS] = numberArguments(7);
const FLOOR = 'rows read (count, sum)';
/** Issue 36's goal for P1D on TimescaleDB (compressed chunks) over the same on PostgreSQL. */
const ENGINE_BOUND = 1.3;
/**
 * P1D from a UTC midnight (its days from the daily rollups), from an hour after one (computed, over all
 * but the first hour's rows: the interval may not exceed 366 days), PT1H.
 */
const VARIANTS: { name: string; aggregate?: Aggregate; from: string }[] = [
  { name: 'raw', from: SERIES_START },
  { name: 'P1D', aggregate: 'P1D', from: SERIES_START },
  { name: 'P1D from 01:00', aggregate: 'P1D', from: '2024-01-01T01:00:00Z' },
  { name: 'PT1H', aggregate: 'PT1H', from: SERIES_START },
];
type Variant = (typeof VARIANTS)[number];
type Sample = { ms: number; serverMs: number; databaseCpuMs: number; clientMs: number; explainMs: number };
const names = [...VARIANTS.map((variant) => variant.name), FLOOR];
// The series starts at SERIES_START: its 527,040 rows.
const to = dayAfterStart(366);

/**
 * The database's own time for a select (EXPLAIN ANALYZE without per-row timing, which would add a
 * clock reading to each of the year's rows), without parallel workers, as the endpoints' COPY runs.
 */
const databaseMs = (sql: Sql, select: string) =>
  sql.begin(async (tx) => {
    await tx`set local max_parallel_workers_per_gather = 0`;
    const [row] = await tx.unsafe(`explain (analyze, timing off, format json) ${select}`);
    return (row!['QUERY PLAN'] as { 'Execution Time': number }[])[0]!['Execution Time'];
  });

console.log(`Aggregate benchmark — ${await machineLine()}\n`);
const { parts: engines, stop } = await onEachEngine(
  'bench_aggregate',
  async ({ sql, asThePolicyLeavesIt, startApi }) => {
    const fixture = await addSeriesFixture(sql);
    console.log(await asThePolicyLeavesIt());
    const bucketFunction = await bucketFunctionOf(sql, sql);
    const server = await startApi();
    return {
      sql,
      fixture,
      server,
      backends: backendCpuMeter(sql, SERVER_APPLICATION_NAME),
      samples: new Map<string, Sample[]>(names.map((name) => [name, []])),
      seriesUrl: (base: string, { aggregate, from }: Variant) =>
        `${base}/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements` +
        `?from=${from}&to=${to}${aggregate ? `&aggregate=${aggregate}` : ''}`,
      selectOf: async ({ aggregate, from }: Variant) =>
        aggregate
          ? aggregateSelect(sql, fixture.tubeId, from, to, {
              bucketFunction,
              seconds: AGGREGATE_SECONDS[aggregate],
            })
          : seriesSelect(fixture.tubeId, from, to),
      floorSelect: `select count(*), sum(measurement_value(value, value_thousandths)) from measurements
        where tube_id = ${fixture.tubeId} and observed_at >= '${SERIES_START}' and observed_at < '${to}'`,
    };
  },
);
try {
  const loadBefore = await loadLine();
  for (let round = -1; round < ROUNDS; round++) {
    for (const { sql, fixture, server, backends, samples, seriesUrl, selectOf, floorSelect } of engines) {
      for (const name of names) {
        const variant = VARIANTS.find((v) => v.name === name);
        const serverBefore = server.cpuMs();
        const clientBefore = ownCpuMs();
        let sample: Omit<Sample, 'explainMs'>;
        if (!variant) {
          // On this process's own connection: the server and its backends do nothing.
          const started = performance.now();
          await sql.begin(async (tx) => {
            await tx`set local max_parallel_workers_per_gather = 0`;
            await tx.unsafe(floorSelect);
          });
          sample = { ms: performance.now() - started, serverMs: 0, databaseCpuMs: Number.NaN, clientMs: 0 };
        } else {
          await backends.start();
          const response = await timedGet(seriesUrl(server.base, variant), { 'x-api-key': fixture.key });
          if (response.status !== 200) throw new Error(`${name}: ${response.status}`);
          sample = {
            ms: response.totalMs,
            serverMs: server.cpuMs() - serverBefore,
            clientMs: ownCpuMs() - clientBefore,
            databaseCpuMs: await backends.stop(),
          };
        }
        const explainMs = await databaseMs(sql, variant ? await selectOf(variant) : floorSelect);
        // Round -1 warms up.
        if (round >= 0) samples.get(name)!.push({ ...sample, explainMs });
      }
    }
  }
  console.log(
    `\n366 days of 1-minute data; median of ${ROUNDS} rounds; before: ${loadBefore}, after: ${await loadLine()}\n`,
  );
  for (const { engineName, samples } of engines) {
    const medianOf = (name: string, field: keyof Sample) => median(samples.get(name)!.map((s) => s[field]));
    const raw = samples.get('raw')!;
    const perRound = (name: string) => samples.get(name)!.map((s, round) => s.ms / raw[round]!.ms);
    console.log(`${engineName}\n`);
    printTable(
      [
        'variant',
        'to last byte',
        'server CPU',
        'database CPU',
        'client CPU',
        'cores busy',
        'EXPLAIN',
        'vs raw',
      ],
      names.map((name) => {
        const wall = medianOf(name, 'ms');
        const cpu = medianOf(name, 'serverMs') + medianOf(name, 'databaseCpuMs') + medianOf(name, 'clientMs');
        const ratios = perRound(name);
        return [
          name,
          ms(wall),
          ms(medianOf(name, 'serverMs')),
          name === FLOOR ? '' : ms(medianOf(name, 'databaseCpuMs')),
          ms(medianOf(name, 'clientMs')),
          name === FLOOR ? '' : (cpu / wall).toFixed(2),
          ms(medianOf(name, 'explainMs')),
          `${ratio(median(ratios))} (${ratio(Math.min(...ratios))}–${ratio(Math.max(...ratios))})`,
        ];
      }),
    );
  }
  for (const [field, title] of [
    ['ms', 'to the last byte'],
    ['explainMs', 'EXPLAIN'],
  ] as const) {
    printEngineRatios(
      `TimescaleDB over PostgreSQL, ${title}`,
      engines,
      names.map((name) => ({
        name,
        samplesOf: ({ samples }) => samples.get(name)!.map((s) => s[field]),
        ...(name === 'P1D' && field === 'ms' ? { bound: ENGINE_BOUND } : {}),
      })),
      ms,
    );
  }
  for (const { engineName, sql, selectOf } of engines) {
    const plan = await sql.begin(async (tx) => {
      await tx`set local max_parallel_workers_per_gather = 0`;
      return tx.unsafe(`explain (analyze, buffers, costs off, timing off) ${await selectOf(VARIANTS[1]!)}`);
    });
    // The whole plan names every chunk on TimescaleDB: its times say where the select's time goes.
    const lines = plan.map((row) => row['QUERY PLAN'] as string);
    console.log(
      `Plan of the P1D select, ${engineName}: ${lines.length} lines; ` +
        lines.filter((line) => /^(Planning|Execution) Time/.test(line)).join(', '),
    );
  }
} finally {
  await stop();
}

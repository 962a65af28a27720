/**
 * Status benchmark: a year of 1-minute data for one tube (527,040 measurements, approved and
 * provisional by turns) in JSON, CSV and Arrow, over real HTTP on loopback, each as it was before 1.3
 * (the floor), with `include=status`, and with a `status` filter that passes every row
 * (`approved,provisional`: a condition on every row, which a filter of all three statuses is not, as
 * that is no filter). As a client sees it (request sent to last byte read), and the CPU of the server
 * and of its database backends. Rounds
 * interleave the variants, so drift of the shared machine hits all alike; the table gives medians and
 * the range of the per-round ratios to the floor of the same format.
 *
 * On each engine of BENCH_ENGINE (lib/engines.ts), the year compressed on TimescaleDB as its policy
 * leaves it; with both, each variant on TimescaleDB over the same on PostgreSQL, in the same rounds.
 *
 *   npm run bench -- status [ROUNDS]     (DATABASE_URL, or an embedded PostgreSQL; BENCH_ENGINE)
 */

import { vacuumMeasurements } from '../../src/importers/measurements/measurements.js';
import { numberArguments } from '../../testkit/arguments.js';
import { loadLine, machineLine, mb, median, ms, printTable, ratio } from '../../testkit/report.js';
import {
  addSeriesFixture,
  dayAfterStart,
  MINUTES_PER_DAY,
  SERIES_START,
} from '../../testkit/seriesFixture.js';
import { rowCounter } from '../lib/bodyRows.js';
import { backendCpuMeter } from '../lib/cpu.js';
import { onEachEngine, printEngineRatios, requireEnginePrerequisites } from '../lib/engines.js';
import { timedGet } from '../lib/http.js';
import type { Format } from '../lib/networkFixture.js';
import { SERVER_APPLICATION_NAME } from '../lib/serverProcess.js';

requireEnginePrerequisites();

const [ROUNDS] = numberArguments(7);
const FORMATS: Format[] = ['json', 'csv', 'arrow'];
/** Each variant's query beside the year's `from`, `to` and `format`; the first is the floor. */
const VARIANTS = {
  plain: '',
  'include=status': '&include=status',
  'status=approved,provisional': '&status=approved,provisional',
} as const;
type Variant = keyof typeof VARIANTS;
const ROWS = 366 * MINUTES_PER_DAY;

/** One request: to its last byte, the server's CPU, its database backends' CPU, its body's bytes. */
type Sample = { ms: number; serverMs: number; databaseMs: number; bytes: number };
const name = (format: Format, variant: Variant) => `${format} ${variant}`;

console.log(`Status benchmark — ${await machineLine()}\n`);
// On each engine the year, statuses by turns, compressed on TimescaleDB; its server process and samples.
const { parts: engines, stop } = await onEachEngine(
  'bench_status',
  async ({ sql, asThePolicyLeavesIt, startApi }) => {
    const fixture = await addSeriesFixture(sql);
    // Every other minute approved: both statuses in every batch, and a filter of both passes every row.
    await sql`
    update measurements set status = (extract(minute from observed_at)::int % 2)::int2
    where tube_id = ${fixture.tubeId}`;
    await vacuumMeasurements(sql);
    console.log(await asThePolicyLeavesIt());
    const server = await startApi();
    return {
      fixture,
      server,
      backends: backendCpuMeter(sql, SERVER_APPLICATION_NAME),
      samples: new Map<string, Sample[]>(),
      seriesUrl: (base: string, format: Format, variant: Variant) =>
        `${base}/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements` +
        `?from=${SERIES_START}&to=${dayAfterStart(366)}&format=${format}${VARIANTS[variant]}`,
    };
  },
);
try {
  const loadBefore = await loadLine();
  for (let round = -1; round < ROUNDS; round++) {
    for (const { fixture, server, backends, samples, seriesUrl } of engines) {
      for (const format of FORMATS) {
        for (const variant of Object.keys(VARIANTS) as Variant[]) {
          // Round -1 warms up, and checks every body's rows as it streams; the timed rounds only read.
          const counter = round < 0 ? rowCounter(format) : undefined;
          await backends.start();
          const serverBefore = server.cpuMs();
          const response = await timedGet(
            seriesUrl(server.base, format, variant),
            { 'x-api-key': fixture.key },
            false,
            counter?.onChunk,
          );
          if (response.status !== 200) throw new Error(`${name(format, variant)}: ${response.status}`);
          const serverMs = server.cpuMs() - serverBefore;
          const databaseMs = await backends.stop();
          if (counter && counter.done().rows !== ROWS) {
            throw new Error(`${name(format, variant)}: ${counter.done().rows} rows, not ${ROWS}`);
          }
          if (round < 0) continue;
          const key = name(format, variant);
          const sample = { ms: response.totalMs, serverMs, databaseMs, bytes: response.bytes };
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
      }
    }
  }
  console.log(
    `\n366 days of 1-minute data, one tube; median of ${ROUNDS} rounds; before: ${loadBefore}, after: ${await loadLine()}\n`,
  );
  const range = (ratios: number[]) =>
    `${ratio(median(ratios))} (${ratio(Math.min(...ratios))}–${ratio(Math.max(...ratios))})`;
  const cpuOf = (sample: Sample) => sample.serverMs + sample.databaseMs;
  for (const { engineName, samples } of engines) {
    console.log(`${engineName}\n`);
    printTable(
      [
        'variant',
        'to last byte',
        'server CPU',
        'database CPU',
        'body',
        'vs plain: time',
        'server CPU',
        'server + database CPU',
      ],
      FORMATS.flatMap((format) =>
        (Object.keys(VARIANTS) as Variant[]).map((variant) => {
          const these = samples.get(name(format, variant))!;
          const floor = samples.get(name(format, 'plain'))!;
          const of = (measure: (sample: Sample) => number) => median(these.map(measure));
          const perRound = (measure: (sample: Sample) => number) =>
            range(these.map((sample, round) => measure(sample) / measure(floor[round]!)));
          return [
            name(format, variant),
            ms(of((s) => s.ms)),
            ms(of((s) => s.serverMs)),
            ms(of((s) => s.databaseMs)),
            mb(of((s) => s.bytes) / 1e6),
            ...(variant === 'plain'
              ? ['', '', '']
              : [perRound((s) => s.ms), perRound((s) => s.serverMs), perRound(cpuOf)]),
          ];
        }),
      ),
    );
  }
  printEngineRatios(
    'TimescaleDB over PostgreSQL, to the last byte',
    engines,
    FORMATS.flatMap((format) =>
      (Object.keys(VARIANTS) as Variant[]).map((variant) => ({
        name: name(format, variant),
        samplesOf: ({ samples }) => samples.get(name(format, variant))!.map((s) => s.ms),
      })),
    ),
    ms,
  );
} finally {
  await stop();
}

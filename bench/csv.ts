/**
 * CSV benchmark: the year of bench/series.ts (527,040 measurements of one tube) as CSV against the same
 * series as JSON, over real HTTP on loopback, plain, gzip and br: time, server CPU, first byte and bytes,
 * median of the rounds (each round runs every variant once, so drift hits all alike). Then server memory,
 * peak minus idle resident set of a fresh server per run, for the year in each format.
 *
 *   node --import tsx bench/csv.ts [ROUNDS] [MEMORY_RUNS]     (DATABASE_URL, or an embedded PostgreSQL)
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { count, machineLine, mb, median, ms, printTable, ratio } from '../testkit/report.js';
import { addSeriesFixture, dayAfterStart, MINUTES_PER_DAY, SERIES_START } from '../testkit/seriesFixture.js';
import { timedGet } from './lib/http.js';
import { freshServerGrowthMb, startServerProcess } from './lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const ROUNDS = Number(process.argv[2] ?? 7);
const MEMORY_RUNS = Number(process.argv[3] ?? 5);
const YEAR_ROWS = 366 * MINUTES_PER_DAY;
const FORMATS = ['json', 'csv'] as const;
const CODINGS = ['identity', 'gzip', 'br'] as const;

const pg = await startDatabaseServer();
try {
  console.log(`CSV benchmark — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_csv');
  const fixture = await addSeriesFixture(sql);
  const seriesUrl = (base: string, format: string, days: number) =>
    `${base}/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements` +
    `?from=${SERIES_START}&to=${dayAfterStart(days)}&format=${format}`;
  const headersFor = (coding: string) => ({
    'x-api-key': fixture.key,
    ...(coding === 'identity' ? {} : { 'accept-encoding': coding }),
  });

  const server = await startServerProcess('api', url);
  type Sample = { ms: number; cpuMs: number; firstByteMs: number; bytes: number };
  const variants = FORMATS.flatMap((format) => CODINGS.map((coding) => ({ format, coding })));
  const name = ({ format, coding }: (typeof variants)[number]) => `${format}, ${coding}`;
  const samples = new Map<string, Sample[]>(variants.map((variant) => [name(variant), []]));
  try {
    await checkBodies(server.base);
    for (let round = -1; round < ROUNDS; round++) {
      for (const variant of variants) {
        const before = server.cpuMs();
        const response = await timedGet(
          seriesUrl(server.base, variant.format, 366),
          headersFor(variant.coding),
        );
        if (response.status !== 200) throw new Error(`${name(variant)}: ${response.status}`);
        const cpuMs = server.cpuMs() - before;
        // Round -1 warms up.
        if (round >= 0) samples.get(name(variant))!.push({ ...response, ms: response.totalMs, cpuMs });
      }
    }
  } finally {
    await server.stop();
  }
  const medianOf = (variant: string, field: keyof Sample) =>
    median(samples.get(variant)!.map((sample) => sample[field]));
  console.log(`366 days, ${count(YEAR_ROWS)} measurements; median of ${ROUNDS} rounds\n`);
  printTable(
    ['variant', 'total', 'server CPU', 'first byte', 'body', 'measurements/s', 'vs JSON'],
    variants.map((variant) => {
      const total = medianOf(name(variant), 'ms');
      const json = medianOf(name({ ...variant, format: 'json' }), 'ms');
      return [
        name(variant),
        ms(total),
        ms(medianOf(name(variant), 'cpuMs')),
        ms(medianOf(name(variant), 'firstByteMs')),
        mb(medianOf(name(variant), 'bytes') / 1e6),
        count(YEAR_ROWS / (total / 1000)),
        ratio(total / json),
      ];
    }),
  );

  const growth = await measureMemory();
  printTable(
    ['server RSS growth (peak − idle), 366 days', 'median', 'runs'],
    FORMATS.map((format) => [format, mb(median(growth[format])), growth[format].map(mb).join(', ')]),
  );

  /** Before timing: the CSV holds the JSON's rows, and each coding decodes to the plain body. */
  async function checkBodies(base: string) {
    const json = await timedGet(seriesUrl(base, 'json', 366), headersFor('identity'), true);
    const csv = await timedGet(seriesUrl(base, 'csv', 366), headersFor('identity'), true);
    const measurements: { observedAt: string; value: number }[] = JSON.parse(
      json.body!.toString(),
    ).measurements;
    const lines = csv.body!.toString().split('\r\n').slice(1, -1);
    const asLines = measurements.map(
      ({ observedAt, value }) => `${observedAt},${JSON.stringify(value)},m,NAP`,
    );
    if (lines.length !== YEAR_ROWS || lines.join('\n') !== asLines.join('\n')) {
      throw new Error('the CSV holds other rows than the JSON');
    }
    for (const [coding, decompress] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const compressed = await timedGet(seriesUrl(base, 'csv', 366), headersFor(coding), true);
      if (!decompress(compressed.body!).equals(csv.body!)) throw new Error(`${coding} CSV differs`);
    }
  }

  /** Growth per format, each run on a fresh server warmed up on one day of that format. */
  async function measureMemory() {
    const growth = { json: [] as number[], csv: [] as number[] };
    for (let run = 0; run < MEMORY_RUNS; run++) {
      for (const format of FORMATS) {
        const request = (base: string, warmUp: boolean) => seriesUrl(base, format, warmUp ? 1 : 366);
        growth[format].push(await freshServerGrowthMb(url, request, headersFor('identity')));
      }
    }
    return growth;
  }
} finally {
  await pg.stop();
}

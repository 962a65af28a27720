/**
 * Series benchmark: a year of 1-minute data for one tube (527,040 measurements, ~28 MB of JSON) over
 * real HTTP on loopback, against the floor (lib/floor.ts) and the naive and buffered baselines
 * (lib/naiveSeries.ts). Each round runs every variant once, one after the other, so drift of the
 * shared machine hits all of them alike; the median of the rounds is printed. Then server memory: peak
 * minus idle resident set of a fresh server process (the kernel's VmHWM), for 30, 183 and 366 days.
 *
 *   node --import tsx bench/series.ts [ROUNDS] [MEMORY_RUNS]     (DATABASE_URL, or an embedded PostgreSQL)
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import type { DataFrame } from 'nodejs-polars';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { polars, requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { count, machineLine, mb, median, ms, printTable, ratio } from '../testkit/report.js';
import { addSeriesFixture, dayAfterStart, MINUTES_PER_DAY, SERIES_START } from '../testkit/seriesFixture.js';
import type { FloorMethod } from './lib/floor.js';
import { timedGet } from './lib/http.js';
import { type ServerProcess, startServerProcess } from './lib/serverProcess.js';

requirePrerequisites([polars, throwawayPostgres]);
// After the check: its native part may be what is missing.
const { default: pl } = await import('nodejs-polars');

const ROUNDS = Number(process.argv[2] ?? 7);
const MEMORY_RUNS = Number(process.argv[3] ?? 5);
const YEAR_ROWS = 366 * MINUTES_PER_DAY;
/**
 * Every server runs with the service's heap settings (SERVICE_NODE_OPTIONS, src/heap.ts); ours also
 * once with V8's defaults (an old-generation limit of ~2 GB here, collected late): a stream that left
 * garbage in the old generation would show it there first.
 */
const OURS_DEFAULT_HEAP = "ours, V8's default heap";
const MEMORY_KINDS = ['ours', OURS_DEFAULT_HEAP, 'naive', 'buffered'];
let clientBodies: { json: Buffer; csv: Buffer; arrow: Buffer } | undefined;
const FLOOR = 'floor: COPY text into Node';
const BINARY_COPY = 'binary COPY, decoded (our source)';
const BINARY_CURSOR = 'binary cursor, decoded';
const OURS_CSV = 'ours, CSV';
const OURS_ARROW = 'ours, Arrow';

const pg = await startDatabaseServer();
try {
  console.log(`Series benchmark — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_series');
  const fixture = await addSeriesFixture(sql);
  const interval = (days: number) => `?from=${SERIES_START}&to=${dayAfterStart(days)}`;
  const oursUrl = (base: string, days: number) =>
    `${base}/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements${interval(days)}`;
  const baselineUrl = (kind: 'naive' | 'buffered', base: string, days: number) =>
    `${base}/bench/${kind}/${fixture.identifier}${interval(days)}`;
  const headers = { 'x-api-key': fixture.key };
  const floorRequest = (method: FloorMethod) => ({
    method,
    tubeId: fixture.tubeId,
    from: SERIES_START,
    to: dayAfterStart(366),
  });

  const server = await startServerProcess('api', url);
  try {
    await checkBodies(server);
    type Sample = { ms: number; cpuMs?: number; firstByteMs?: number; bytes?: number };
    /** Also the server's CPU time: on a shared machine it drifts far less than the wall clock. */
    const withCpu = async (run: () => Promise<Sample>): Promise<Sample> => {
      const before = server.cpuMs();
      const sample = await run();
      return { ...sample, cpuMs: server.cpuMs() - before };
    };
    const variants: [string, () => Promise<Sample>][] = [
      [FLOOR, () => server.floor(floorRequest('copyText'))],
      [BINARY_COPY, () => server.floor(floorRequest('copyBinary'))],
      [BINARY_CURSOR, () => server.floor(floorRequest('binaryCursor'))],
      ['ours (streamed)', () => httpSample(oursUrl(server.base, 366), headers)],
      [OURS_CSV, () => httpSample(`${oursUrl(server.base, 366)}&format=csv`, headers)],
      [OURS_ARROW, () => httpSample(`${oursUrl(server.base, 366)}&format=arrow`, headers)],
      ['naive: all rows, Date, JSON.stringify', () => httpSample(baselineUrl('naive', server.base, 366), {})],
      [
        'buffered: our stream, collected, sent',
        () => httpSample(baselineUrl('buffered', server.base, 366), {}),
      ],
      ['ours, gzip', () => httpSample(oursUrl(server.base, 366), { ...headers, 'accept-encoding': 'gzip' })],
      ['ours, br', () => httpSample(oursUrl(server.base, 366), { ...headers, 'accept-encoding': 'br' })],
    ];
    const samples = new Map<string, Sample[]>(variants.map(([name]) => [name, []]));
    for (let round = -1; round < ROUNDS; round++) {
      for (const [name, run] of variants) {
        const sample = await withCpu(run);
        if (round >= 0) samples.get(name)!.push(sample); // round -1 warms up
      }
    }
    const medianOf = (name: string, field: keyof Sample) =>
      median(samples.get(name)!.map((sample) => sample[field] as number));
    const floor = medianOf(FLOOR, 'ms');
    const ours = medianOf('ours (streamed)', 'ms');
    const csv = medianOf(OURS_CSV, 'ms');
    const arrow = medianOf(OURS_ARROW, 'ms');
    const naive = medianOf('naive: all rows, Date, JSON.stringify', 'ms');
    const buffered = medianOf('buffered: our stream, collected, sent', 'ms');
    console.log(`366 days, ${count(YEAR_ROWS)} measurements; median of ${ROUNDS} rounds\n`);
    printTable(
      ['variant', 'total', 'server CPU', 'first byte', 'body', 'measurements/s', 'vs floor'],
      variants.map(([name]) => {
        const total = medianOf(name, 'ms');
        const bytes = medianOf(name, 'bytes');
        const firstByte = medianOf(name, 'firstByteMs');
        return [
          name,
          ms(total),
          ms(medianOf(name, 'cpuMs')),
          Number.isNaN(firstByte) ? '' : ms(firstByte),
          Number.isNaN(bytes) ? '' : mb(bytes / 1e6),
          count(YEAR_ROWS / (total / 1000)),
          ratio(total / floor),
        ];
      }),
    );
    printTable(
      ['target', 'measured', 'met'],
      [
        // The floor is the database's own text output streamed into Node (lib/floor.ts), issue 23.
        ['JSON ≤ 1.5 × COPY text', ratio(ours / floor), ours / floor <= 1.5 ? 'yes' : 'NO'],
        ['CSV ≤ 1.2 × COPY text', ratio(csv / floor), csv / floor <= 1.2 ? 'yes' : 'NO'],
        ['Arrow ≤ 1.0 × COPY text', ratio(arrow / floor), arrow / floor <= 1.0 ? 'yes' : 'NO'],
        [
          'binary COPY / binary cursor (the row source chosen)',
          ratio(medianOf(BINARY_COPY, 'ms') / medianOf(BINARY_CURSOR, 'ms')),
          '',
        ],
        ['naive / ours ≥ 1.5', ratio(naive / ours), naive / ours >= 1.5 ? 'yes' : 'NO'],
        ['buffered / ours (the cost of buffering)', ratio(buffered / ours), ''],
        [
          'first byte < 50 ms',
          ms(medianOf('ours (streamed)', 'firstByteMs')),
          medianOf('ours (streamed)', 'firstByteMs') < 50 ? 'yes' : 'NO',
        ],
      ],
    );
  } finally {
    await server.stop();
  }

  printTable(
    ['the client side: the year into a polars data frame', 'median', 'vs Arrow'],
    clientSide(clientBodies!),
  );

  const memory = await measureMemory();
  printTable(
    ['server RSS growth (peak − idle)', ...[30, 183, 366].map((days) => `${days} days`), 'spread'],
    MEMORY_KINDS.map((kind) => {
      const growth = [30, 183, 366].map((days) => memory.get(`${kind} ${days}`)!);
      const spread = (Math.max(...growth) - Math.min(...growth)) / Math.max(...growth);
      return [kind, ...growth.map(mb), `${(spread * 100).toFixed(0)} %`];
    }),
  );

  /** Every variant's body is checked once, before anything is timed. */
  async function checkBodies(server: ServerProcess): Promise<void> {
    const plain = await timedGet(oursUrl(server.base, 366), headers, true);
    const measurements = JSON.parse(plain.body!.toString()).measurements;
    if (measurements.length !== YEAR_ROWS) throw new Error(`ours sent ${measurements.length} measurements`);
    const arrow = await timedGet(`${oursUrl(server.base, 366)}&format=arrow`, headers, true);
    if (tableFromIPC(arrow.body!).numRows !== YEAR_ROWS) throw new Error('the Arrow year is not whole');
    const csv = await timedGet(`${oursUrl(server.base, 366)}&format=csv`, headers, true);
    clientBodies = { json: plain.body!, csv: csv.body!, arrow: arrow.body! };
    const expected = JSON.stringify(measurements);
    const buffered = await timedGet(baselineUrl('buffered', server.base, 366), {}, true);
    if (JSON.stringify(JSON.parse(buffered.body!.toString()).measurements) !== expected) {
      throw new Error('the buffered baseline sent other measurements');
    }
    const naive = await timedGet(baselineUrl('naive', server.base, 366), {}, true);
    // Its times carry milliseconds (lib/naiveSeries.ts).
    if (
      JSON.stringify(JSON.parse(naive.body!.toString()).measurements).replaceAll('.000Z', 'Z') !== expected
    ) {
      throw new Error('the naive baseline sent other measurements');
    }
    for (const [encoding, decompress] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const response = await timedGet(
        oursUrl(server.base, 366),
        { ...headers, 'accept-encoding': encoding },
        true,
      );
      if (response.headers['content-encoding'] !== encoding) throw new Error(`${encoding} not offered`);
      if (!decompress(response.body!).equals(plain.body!)) throw new Error(`${encoding} body differs`);
    }
  }

  /** Median growth per (kind, days), each run on a fresh server warmed up on one day. */
  async function measureMemory(): Promise<Map<string, number>> {
    const growth = new Map<string, number>();
    for (const kind of MEMORY_KINDS) {
      const ours = kind.startsWith('ours');
      for (const days of [30, 183, 366]) {
        const runs: number[] = [];
        for (let run = 0; run < MEMORY_RUNS; run++) {
          const heap = kind === OURS_DEFAULT_HEAP ? { nodeArgs: [] } : {};
          const server = await startServerProcess('api', url, heap);
          try {
            const urlFor = (base: string, days: number) =>
              ours ? oursUrl(base, days) : baselineUrl(kind as 'naive' | 'buffered', base, days);
            const sent = ours ? headers : {};
            for (let warm = 0; warm < 3; warm++) await timedGet(urlFor(server.base, 1), sent);
            const idle = server.residentMb();
            server.resetPeak();
            const response = await timedGet(urlFor(server.base, days), sent);
            if (response.status !== 200) throw new Error(`${kind} ${days} days: ${response.status}`);
            runs.push(server.peakMb() - idle);
          } finally {
            await server.stop();
          }
        }
        growth.set(`${kind} ${days}`, median(runs));
      }
    }
    return growth;
  }
} finally {
  await pg.stop();
}

/**
 * The year's bodies read into a polars data frame the way a client would, timed in this process:
 * Arrow by `readIPCStream`, CSV by `readCSV` with its times parsed (`tryParseDates`), JSON by JSON.parse of the document
 * and a frame of its measurements (polars reads no nested document).
 */
function clientSide(bodies: { json: Buffer; csv: Buffer; arrow: Buffer }): string[][] {
  const readers: [string, () => DataFrame][] = [
    ['Arrow (readIPCStream)', () => pl.readIPCStream(bodies.arrow)],
    ['CSV (readCSV, tryParseDates)', () => pl.readCSV(bodies.csv, { tryParseDates: true })],
    [
      'JSON (JSON.parse, then a data frame)',
      () => pl.DataFrame(JSON.parse(bodies.json.toString()).measurements),
    ],
  ];
  const times = readers.map(([, read]) => {
    const runs: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      const frame = read();
      runs.push(performance.now() - started);
      if (frame.height !== YEAR_ROWS) throw new Error(`a frame of ${frame.height} rows`);
    }
    return median(runs);
  });
  return readers.map(([name], i) => [name, ms(times[i]!), ratio(times[i]! / times[0]!)]);
}

async function httpSample(url: string, headers: Record<string, string>) {
  const response = await timedGet(url, headers);
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return { ms: response.totalMs, firstByteMs: response.firstByteMs, bytes: response.bytes };
}

/**
 * Formats: a year as JSON, CSV and Arrow, for one tube (the series endpoint: 527,040 rows of 1-minute
 * data) and for a network (the network endpoint: WELLS × 4 tubes of 15-minute data, 35,136 rows each),
 * over real HTTP on loopback, each divided by its floor: PostgreSQL's own `COPY (the same select) TO
 * STDOUT` of the same rows, streamed into the server process (lib/floor.ts). Also the endpoints' row
 * source alone (binary COPY, decoded), so that what a format adds above it shows.
 *
 * Each round runs every variant once, one after the other, so drift of a shared machine hits all of them
 * alike; the table gives the median of the rounds and the range of the per-round ratios. The server's
 * CPU over the floor's (Node receiving the COPY's bytes) drifts less than the wall clock on a busy machine.
 *
 *   npm run bench -- formats [ROUNDS] [WELLS]     (defaults 5 rounds, 50 wells = 200 tubes)
 *   (DATABASE_URL, or an embedded PostgreSQL)
 */
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, loadLine, machineLine, mb, median, ms, printTable, ratio } from '../../testkit/report.js';
import { dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import { rowCounter } from '../lib/bodyRows.js';
import type { FloorMethod } from '../lib/floor.js';
import { timedGet } from '../lib/http.js';
import {
  FORMATS,
  type Format,
  networkUrl,
  seriesUrl,
  startNetworkDatabase,
  YEAR_ROWS,
} from '../lib/networkFixture.js';
import { type ServerProcess, startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const ROUNDS = Number(process.argv[2] ?? 5);
const WELLS = Number(process.argv[3] ?? 50);
const FLOOR = 'COPY text into Node (the floor)';
const ROW_SOURCE = 'binary COPY, decoded (the row source)';
/** Issue 23's bounds for the series, as a multiple of the floor. */
const SERIES_BOUNDS: Record<Format, number> = { json: 1.5, csv: 1.2, arrow: 1.0 };

type Rows = 'series' | 'network';
interface Sample {
  ms: number;
  cpuMs: number;
  firstByteMs?: number;
  bytes?: number;
}

const db = await startNetworkDatabase('bench_formats', WELLS);
try {
  const { series, network } = db;
  console.log(`Formats — ${await machineLine()}\n${db.description}; ${await loadLine()}\n`);
  console.log(
    `series: 1 tube × ${count(YEAR_ROWS)} rows (1-minute data, a year); network: ${network.tubes.length} ` +
      `tubes × ${count(network.rows / network.tubes.length)} rows (15-minute data, a year) = ` +
      `${count(network.rows)} rows; written in ${db.setupSeconds.toFixed(0)} s; ${ROUNDS} rounds\n`,
  );
  const rowsOf = (kind: Rows) => (kind === 'series' ? YEAR_ROWS : network.rows);
  const floorRequest = (kind: Rows, method: FloorMethod) => ({
    method,
    tubeIds: kind === 'series' ? [series.tubeId] : network.tubes.map((tube) => tube.id),
    from: SERIES_START,
    to: dayAfterStart(366),
  });
  const urlOf = (base: string, kind: Rows, format: Format) =>
    kind === 'series' ? seriesUrl(base, series.identifier, format) : networkUrl(base, format);
  const headersOf = (kind: Rows) => ({ 'x-api-key': kind === 'series' ? series.key : network.key });

  const server = await startServerProcess('api', db.url);
  const samples = new Map<string, Sample[]>();
  const variants: [Rows, string, () => Promise<Omit<Sample, 'cpuMs'>>][] = (
    ['series', 'network'] as const
  ).flatMap((kind) => [
    [kind, FLOOR, () => server.floor(floorRequest(kind, 'copyText'))],
    [kind, ROW_SOURCE, () => server.floor(floorRequest(kind, 'copyBinary'))],
    ...FORMATS.map(
      (format) =>
        [kind, format, () => httpSample(urlOf(server.base, kind, format), headersOf(kind))] as [
          Rows,
          string,
          () => Promise<Omit<Sample, 'cpuMs'>>,
        ],
    ),
  ]);
  try {
    await checkBodies(server);
    for (let round = -1; round < ROUNDS; round++) {
      for (const [kind, name, run] of variants) {
        const before = server.cpuMs();
        const sample = { ...(await run()), cpuMs: 0 };
        sample.cpuMs = server.cpuMs() - before;
        // Round -1 warms up.
        if (round >= 0) samples.set(`${kind} ${name}`, [...(samples.get(`${kind} ${name}`) ?? []), sample]);
      }
    }
  } finally {
    await server.stop();
  }

  const of = (kind: Rows, name: string) => samples.get(`${kind} ${name}`)!;
  const medianOf = (kind: Rows, name: string, field: keyof Sample) =>
    median(of(kind, name).map((sample) => sample[field]));
  /** This variant's time over the floor's, one per round. */
  const roundRatios = (kind: Rows, name: string) =>
    of(kind, name).map((sample, round) => sample.ms / of(kind, FLOOR)[round]!.ms);
  const vsFloor = (kind: Rows, name: string) => medianOf(kind, name, 'ms') / medianOf(kind, FLOOR, 'ms');

  console.log(`${await loadLine()} after the rounds\n`);
  for (const kind of ['series', 'network'] as const) {
    printTable(
      [
        kind,
        'total',
        'server CPU',
        'first byte',
        'body',
        'rows/s',
        'vs COPY',
        'rounds',
        'server CPU vs COPY',
      ],
      variants
        .filter(([rows]) => rows === kind)
        .map(([, name]) => {
          const total = medianOf(kind, name, 'ms');
          const firstByte = medianOf(kind, name, 'firstByteMs');
          const bytes = medianOf(kind, name, 'bytes');
          const ratios = roundRatios(kind, name);
          return [
            name,
            ms(total),
            ms(medianOf(kind, name, 'cpuMs')),
            Number.isNaN(firstByte) ? '' : ms(firstByte),
            Number.isNaN(bytes) ? '' : mb(bytes / 1e6),
            count(rowsOf(kind) / (total / 1000)),
            ratio(vsFloor(kind, name)),
            `${ratio(Math.min(...ratios))} – ${ratio(Math.max(...ratios))}`,
            ratio(medianOf(kind, name, 'cpuMs') / medianOf(kind, FLOOR, 'cpuMs')),
          ];
        }),
    );
  }
  printTable(
    ['format', 'series vs COPY', 'bound', 'met', 'network vs COPY'],
    FORMATS.map((format) => [
      format,
      ratio(vsFloor('series', format)),
      `≤ ${ratio(SERIES_BOUNDS[format])}`,
      vsFloor('series', format) <= SERIES_BOUNDS[format] ? 'yes' : 'NO',
      ratio(vsFloor('network', format)),
    ]),
  );
  console.log(`${await loadLine()} at the end`);

  /** Before timing: each format's body holds every row of the year, series and network. */
  async function checkBodies(server: ServerProcess): Promise<void> {
    for (const kind of ['series', 'network'] as const) {
      for (const format of FORMATS) {
        const counter = rowCounter(format);
        const response = await timedGet(
          urlOf(server.base, kind, format),
          headersOf(kind),
          false,
          counter.onChunk,
        );
        if (response.status !== 200) throw new Error(`${kind} ${format}: ${response.status}`);
        const { rows } = counter.done();
        if (rows !== rowsOf(kind)) throw new Error(`${kind} ${format}: ${rows} rows, not ${rowsOf(kind)}`);
      }
      const floor = await server.floor(floorRequest(kind, 'copyText'));
      if (floor.rows !== rowsOf(kind))
        throw new Error(`${kind} COPY: ${floor.rows} rows, not ${rowsOf(kind)}`);
    }
  }
} finally {
  await db.stop();
}

async function httpSample(url: string, headers: Record<string, string>) {
  const response = await timedGet(url, headers);
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return { ms: response.totalMs, firstByteMs: response.firstByteMs, bytes: response.bytes };
}

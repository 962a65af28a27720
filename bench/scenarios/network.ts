/**
 * Network: a monitoring network's year in one request of
 * GET /v1/groundwater-monitoring-measurements, against one long series and against the same network
 * pulled tube by tube through the series endpoint, in each format (JSON, CSV, Arrow), over real HTTP
 * on loopback.
 *
 * - series: one tube's year of 1-minute data (527,040 rows), the series endpoint: rows per second;
 * - network: every tube of the network (WELLS × 4 tubes, a year of 15-minute data each: 35,136 rows per
 *   tube), one request: rows per second, and its ratio to the series' of the same round (target ≥ 0.9×);
 * - tube by tube: the same network through the series endpoint, one request per tube, 2 at a time (the
 *   default concurrency limit), limits lifted: wall time. Under the default limits (a burst of 60
 *   tokens, then 0.5 a second) the wall time is computed from the limits and the measured request
 *   times rather than waited for (limitedWallMs): it is the token bucket's, minutes to hours.
 *
 * Rounds run every variant once, format by format, so drift of the shared machine hits all alike;
 * medians of the rounds with their range. The memory of a network's year: the memory scenario.
 *
 *   npm run bench -- network [ROUNDS] [WELLS]           (defaults 3 rounds, 50 wells = 200 tubes)
 *   BENCH_FORMATS=json,csv npm run bench -- network     (a subset of the formats)
 */
import { loadSettings } from '../../src/config.js';
import { numberArguments } from '../../testkit/arguments.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, loadLine, machineLine, mb, median, ms, printTable, ratio } from '../../testkit/report.js';
import { rowCounter } from '../lib/bodyRows.js';
import { timedGet } from '../lib/http.js';
import {
  chosenFormats,
  type Format,
  networkUrl,
  seriesUrl,
  startNetworkDatabase,
  YEAR_ROWS,
  type Year,
  yearHeaders,
  yearRows,
  yearUrl,
} from '../lib/networkFixture.js';
import { type ServerProcess, startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [ROUNDS, WELLS] = numberArguments(3, 50);
/** The issue's network, for the computed wall time under the default limits. */
const ISSUE_NETWORK_TUBES = 3000;
const FORMATS = chosenFormats();
const DEFAULTS = loadSettings({});
const LIMITS = {
  burst: DEFAULTS.RATE_LIMIT_BURST,
  perSecond: DEFAULTS.RATE_LIMIT_PER_SECOND,
  concurrency: DEFAULTS.CONCURRENCY_LIMIT,
};

type Kind = 'series' | 'network' | 'tube by tube';
const KINDS: Kind[] = ['series', 'network', 'tube by tube'];
interface Sample {
  ms: number;
  cpuMs: number;
  bytes: number;
  firstByteMs?: number;
  /** Tube by tube: each request's time. */
  requestMs?: number[];
}

/**
 * Wall time of `requests` requests of `requestMs` each under a token bucket of `burst` tokens refilled
 * at `perSecond`, `concurrency` at a time: a client that sends each request as soon as a token and a slot
 * are free (it waits what RateLimit-Reset tells it; a 429 costs no token).
 */
export function limitedWallMs(
  requests: number,
  requestMs: number,
  limits: { burst: number; perSecond: number; concurrency: number },
): number {
  const slots = new Array<number>(limits.concurrency).fill(0);
  let end = 0;
  for (let i = 0; i < requests; i++) {
    // Tokens are consumed faster than they refill, so the bucket never caps: the i-th token (0-based)
    // is there once i + 1 - burst have been refilled.
    const token = (Math.max(0, i + 1 - limits.burst) / limits.perSecond) * 1000;
    slots.sort((a, b) => a - b);
    const start = Math.max(slots[0]!, token);
    slots[0] = start + requestMs;
    end = Math.max(end, slots[0]);
  }
  return end;
}

const minutes = (milliseconds: number) =>
  milliseconds >= 60_000
    ? `${(milliseconds / 60_000).toFixed(1)} min`
    : `${(milliseconds / 1000).toFixed(1)} s`;

const db = await startNetworkDatabase('bench_network', WELLS);
try {
  const { series, network } = db;
  const tubes = network.tubes.length;
  console.log(`Network — ${await machineLine()}\n${db.description}; ${await loadLine()}\n`);
  console.log(
    `network: ${tubes} tubes × ${count(network.rows / tubes)} rows (15-minute data, a year) = ` +
      `${count(network.rows)} rows; series: ${count(YEAR_ROWS)} rows (1-minute data, a year); ` +
      `written in ${db.setupSeconds.toFixed(0)} s; ${ROUNDS} rounds, formats ${FORMATS.join(', ')}\n`,
  );
  /** Tube by tube reads the network's year. */
  const yearOf = (kind: Kind): Year => (kind === 'series' ? 'series' : 'network');
  const samples = new Map<string, Sample[]>();
  const name = (kind: Kind, format: Format) => `${kind}, ${format}`;

  const server = await startServerProcess('api', db.url);
  try {
    await checkBodies(server);
    for (let round = -1; round < ROUNDS; round++) {
      for (const format of FORMATS) {
        for (const kind of KINDS) {
          const before = server.cpuMs();
          const sample = await run(server, kind, format);
          sample.cpuMs = server.cpuMs() - before;
          // Round -1 warms up.
          if (round >= 0)
            samples.set(name(kind, format), [...(samples.get(name(kind, format)) ?? []), sample]);
        }
      }
    }
  } finally {
    await server.stop();
  }
  const of = (kind: Kind, format: Format) => samples.get(name(kind, format))!;
  const medianOf = (kind: Kind, format: Format, field: 'ms' | 'cpuMs' | 'bytes' | 'firstByteMs') =>
    median(of(kind, format).map((sample) => sample[field]));
  const range = (values: number[], show: (value: number) => string) =>
    `${show(Math.min(...values))} – ${show(Math.max(...values))}`;
  /** network rows/s over series rows/s, one per round. */
  const networkRatios = (format: Format) =>
    of('network', format).map(
      (one, round) => network.rows / one.ms / (YEAR_ROWS / of('series', format)[round]!.ms),
    );

  /** Server CPU per row, network over series, one per round. */
  const cpuRatios = (format: Format) =>
    of('network', format).map(
      (one, round) => one.cpuMs / network.rows / (of('series', format)[round]!.cpuMs / YEAR_ROWS),
    );

  console.log(`${await loadLine()} after the rounds\n`);
  printTable(
    ['variant', 'total', 'range', 'server CPU', 'first byte', 'body', 'rows/s', 'vs series rows/s'],
    FORMATS.flatMap((format) =>
      KINDS.map((kind) => {
        const total = medianOf(kind, format, 'ms');
        const ratios = kind === 'series' ? [1] : kind === 'network' ? networkRatios(format) : [];
        const firstByte = medianOf(kind, format, 'firstByteMs');
        return [
          name(kind, format),
          ms(total),
          range(
            of(kind, format).map((sample) => sample.ms),
            ms,
          ),
          ms(medianOf(kind, format, 'cpuMs')),
          Number.isNaN(firstByte) ? '' : ms(firstByte),
          mb(medianOf(kind, format, 'bytes') / 1e6),
          count(yearRows(db, yearOf(kind)) / (total / 1000)),
          kind === 'network'
            ? `${ratio(median(ratios))} (${range(ratios, ratio)})`
            : kind === 'series'
              ? '1.00×'
              : '',
        ];
      }),
    ),
  );

  printTable(
    ['target', 'measured (median; range over rounds)', 'met'],
    FORMATS.flatMap((format) => {
      const ratios = networkRatios(format);
      return [
        [
          `network rows/s ≥ 0.9 × series rows/s, ${format}`,
          `${ratio(median(ratios))} (${range(ratios, ratio)})`,
          median(ratios) >= 0.9 ? 'yes' : 'NO',
        ],
        [
          // The server's CPU per row, network over series: on a shared machine it drifts less than the wall.
          `(server CPU per row, network / series, ${format})`,
          `${ratio(median(cpuRatios(format)))} (${range(cpuRatios(format), ratio)})`,
          '',
        ],
      ];
    }),
    [0, 1],
  );

  console.log(
    `Tube by tube: ${tubes} requests of the series endpoint, ${LIMITS.concurrency} at a time. Under the ` +
      `default limits (burst ${LIMITS.burst}, ${LIMITS.perSecond} a second, ${LIMITS.concurrency} concurrent) ` +
      'computed from the limits and the median request time measured with them lifted; the network request ' +
      'costs one token, so its time is the same under the limits.\n',
  );
  printTable(
    [
      'format',
      'network, 1 request',
      'tube by tube, lifted',
      'vs network',
      'request (median)',
      `tube by tube, default limits (${tubes})`,
      'vs network',
      `the same, ${count(ISSUE_NETWORK_TUBES)} tubes`,
    ],
    FORMATS.map((format) => {
      const oneRequest = medianOf('network', format, 'ms');
      const lifted = medianOf('tube by tube', format, 'ms');
      const request = median(of('tube by tube', format).flatMap((sample) => sample.requestMs!));
      const limited = limitedWallMs(tubes, request, LIMITS);
      const issue = limitedWallMs(ISSUE_NETWORK_TUBES, request, LIMITS);
      return [
        format,
        ms(oneRequest),
        ms(lifted),
        ratio(lifted / oneRequest),
        ms(request),
        minutes(limited),
        ratio(limited / oneRequest),
        minutes(issue),
      ];
    }),
  );
  console.log(`${await loadLine()} at the end`);

  async function run(server: ServerProcess, kind: Kind, format: Format): Promise<Sample> {
    const headers = yearHeaders(db, yearOf(kind));
    if (kind !== 'tube by tube') {
      const url = yearUrl(db, server.base, kind, format);
      const response = await timedGet(url, headers);
      if (response.status !== 200) throw new Error(`${kind} ${format}: ${response.status}`);
      return { ms: response.totalMs, cpuMs: 0, bytes: response.bytes, firstByteMs: response.firstByteMs };
    }
    // Workers taking the next tube as soon as their last request is done: a client under the limit.
    const started = performance.now();
    const requestMs: number[] = [];
    let next = 0;
    let bytes = 0;
    const worker = async () => {
      while (next < tubes) {
        const tube = network.tubes[next++]!;
        const response = await timedGet(seriesUrl(server.base, tube.identifier, format), headers);
        if (response.status !== 200) throw new Error(`tube ${tube.identifier} ${format}: ${response.status}`);
        requestMs.push(response.totalMs);
        bytes += response.bytes;
      }
    };
    await Promise.all(Array.from({ length: LIMITS.concurrency }, worker));
    return { ms: performance.now() - started, cpuMs: 0, bytes, requestMs };
  }

  /** Before timing: each format's network body holds every row of every tube, and the series its year. */
  async function checkBodies(server: ServerProcess): Promise<void> {
    for (const format of FORMATS) {
      for (const [kind, url, key, rows] of [
        ['series', seriesUrl(server.base, series.identifier, format), series.key, YEAR_ROWS],
        ['network', networkUrl(server.base, format), network.key, network.rows],
      ] as const) {
        const counter = rowCounter(format);
        const response = await timedGet(url, { 'x-api-key': key }, false, counter.onChunk);
        if (response.status !== 200) throw new Error(`${kind} ${format}: ${response.status}`);
        const found = counter.done();
        if (found.rows !== rows) throw new Error(`${kind} ${format}: ${found.rows} rows, not ${rows}`);
        if (found.tubes !== undefined && kind === 'network' && found.tubes !== tubes) {
          throw new Error(`network arrow: ${found.tubes} tubes in the dictionary, not ${tubes}`);
        }
      }
    }
  }
} finally {
  await db.stop();
}

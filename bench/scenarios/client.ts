/**
 * Client benchmark (issue 23, "the client side"): how long a user waits for a usable polars data frame
 * (nodejs-polars) of a year, from the request to the frame, download included, from a running server
 * over real HTTP on loopback:
 *
 * - Arrow: the body's bytes read by `pl.readIPCStream`;
 * - CSV: `pl.readCSV` of the bytes with `tryParseDates` (observedAt becomes datetime[us, UTC]);
 * - JSON: `JSON.parse`, the columns gathered from the parsed document into arrays, `pl.DataFrame` of
 *   them, and observedAt parsed by `str.strptime(…, '%+')` into datetime[us, UTC].
 *
 * For the year of one tube (the series endpoint: 527,040 rows of 1-minute data) and for the year of a
 * network (the network endpoint: WELLS × 4 tubes of 15-minute data, 35,136 rows each). Every frame has
 * observedAt as datetime[us, UTC] and value as float64 (and, for the network, tubeIdentifier); the
 * frames of the three formats are checked to be equal before timing. Rounds run every variant once;
 * medians of the rounds, with their range. Before each variant the client's heap is collected, so that
 * one variant's garbage is not collected in the next one's time.
 *
 *   npm run bench -- client [ROUNDS] [WELLS]     (defaults 3, 50 wells = 200 tubes)
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { DataFrame } from 'nodejs-polars';
import { numberArguments } from '../../testkit/arguments.js';
import { polars, requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, loadLine, machineLine, mb, median, ms, printTable, ratio } from '../../testkit/report.js';
import { timedGet } from '../lib/http.js';
import {
  chosenFormats,
  type Format,
  startNetworkDatabase,
  YEAR_ROWS,
  yearHeaders,
  yearRows,
  yearUrl,
} from '../lib/networkFixture.js';
import { startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([polars, throwawayPostgres]);
// After the check: its native part may be what is missing.
const { default: pl } = await import('nodejs-polars');

const [ROUNDS, WELLS] = numberArguments(3, 50);
const FORMATS = chosenFormats();
const WHATS = ['series', 'network'] as const;
type What = (typeof WHATS)[number];

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

interface Measurement {
  observedAt: string;
  value: number;
}
interface SeriesDocument {
  tubeIdentifier: string;
  measurements: Measurement[];
}

/** The JSON body as a frame, as a user would build it: parse, gather the columns, parse the instants. */
function frameFromJson(body: Buffer, what: What): DataFrame {
  const document = JSON.parse(body.toString());
  const series: SeriesDocument[] = what === 'series' ? [document] : document.series;
  const tubeIdentifier: string[] = [];
  const observedAt: string[] = [];
  const value: number[] = [];
  for (const one of series) {
    for (const measurement of one.measurements) {
      if (what === 'network') tubeIdentifier.push(one.tubeIdentifier);
      observedAt.push(measurement.observedAt);
      value.push(measurement.value);
    }
  }
  const columns = what === 'network' ? { tubeIdentifier, observedAt, value } : { observedAt, value };
  // strptime takes its unit from the text: microseconds and the zone, UTC (the 'ms' names the kind).
  return pl.DataFrame(columns).withColumns(pl.col('observedAt').str.strptime(pl.Datetime('ms'), '%+'));
}

function frameFrom(body: Buffer, format: Format, what: What): DataFrame {
  if (format === 'arrow') return pl.readIPCStream(body);
  if (format === 'csv') return pl.readCSV(body, { tryParseDates: true });
  return frameFromJson(body, what);
}

const db = await startNetworkDatabase('bench_client', WELLS);
try {
  const { network } = db;
  console.log(`Client benchmark — ${await machineLine()}\n${db.description}; ${await loadLine()}\n`);
  console.log(
    `series: ${count(YEAR_ROWS)} rows (one tube, 1-minute data, a year); network: ${network.tubes.length} ` +
      `tubes, ${count(network.rows)} rows (15-minute data, a year); nodejs-polars; ${ROUNDS} rounds\n`,
  );
  type Sample = { downloadMs: number; frameMs: number; totalMs: number; bytes: number };
  const samples = new Map<string, Sample[]>();
  const name = (what: What, format: Format) => `${what}, ${format}`;

  const server = await startServerProcess('api', db.url);
  try {
    const load = async (what: What, format: Format) => {
      const url = yearUrl(db, server.base, what, format);
      collect();
      const response = await timedGet(url, yearHeaders(db, what), true);
      if (response.status !== 200) throw new Error(`${name(what, format)}: ${response.status}`);
      const parsing = performance.now();
      const frame = frameFrom(response.body!, format, what);
      const frameMs = performance.now() - parsing;
      const sample = {
        downloadMs: response.totalMs,
        frameMs,
        totalMs: response.totalMs + frameMs,
        bytes: response.bytes,
      };
      return { frame, sample };
    };
    for (let round = -1; round < ROUNDS; round++) {
      for (const what of WHATS) {
        const frames: DataFrame[] = [];
        for (const format of FORMATS) {
          const { frame, sample } = await load(what, format);
          // Round -1 warms up and checks the frames.
          if (round >= 0)
            samples.set(name(what, format), [...(samples.get(name(what, format)) ?? []), sample]);
          else frames.push(frame);
        }
        if (round < 0) checkFrames(frames, what);
      }
    }
  } finally {
    await server.stop();
  }

  const of = (what: What, format: Format) => samples.get(name(what, format))!;
  const medianOf = (what: What, format: Format, field: keyof Sample) =>
    median(of(what, format).map((sample) => sample[field]));
  const reference = FORMATS.includes('arrow') ? 'arrow' : FORMATS[0]!;
  console.log(`${await loadLine()} at the end\n`);
  printTable(
    [
      'year into a data frame',
      'body',
      'download',
      'frame built',
      'total',
      'range',
      'rows/s',
      `vs ${reference}`,
    ],
    WHATS.flatMap((what) =>
      FORMATS.map((format) => {
        const total = medianOf(what, format, 'totalMs');
        const totals = of(what, format).map((sample) => sample.totalMs);
        return [
          name(what, format),
          mb(medianOf(what, format, 'bytes') / 1e6),
          ms(medianOf(what, format, 'downloadMs')),
          ms(medianOf(what, format, 'frameMs')),
          ms(total),
          `${ms(Math.min(...totals))} – ${ms(Math.max(...totals))}`,
          count(yearRows(db, what) / (total / 1000)),
          ratio(total / medianOf(what, reference, 'totalMs')),
        ];
      }),
    ),
  );

  /** The frames of the formats hold the same rows: same height, instants and values. */
  function checkFrames(frames: DataFrame[], what: What) {
    const columns = what === 'network' ? ['tubeIdentifier', 'observedAt', 'value'] : ['observedAt', 'value'];
    // Categorical (Arrow's dictionaries) and plain strings compare as strings.
    const comparable = (frame: DataFrame) =>
      frame
        .select(...columns)
        .withColumns(...(what === 'network' ? [pl.col('tubeIdentifier').cast(pl.Utf8)] : []));
    const [first, ...others] = frames.map(comparable);
    if (first!.height !== yearRows(db, what))
      throw new Error(`${what}: ${first!.height} rows, not ${yearRows(db, what)}`);
    const types = first!.dtypes.map(String).join(', ');
    if (!types.includes('Datetime(us,UTC)'))
      throw new Error(`${what}: observedAt is not datetime[us, UTC]: ${types}`);
    others.forEach((frame, index) => {
      if (!frame.frameEqual(first!)) {
        throw new Error(`${what}: the ${FORMATS[index + 1]} frame differs from the ${FORMATS[0]} one`);
      }
    });
  }
} finally {
  await db.stop();
}

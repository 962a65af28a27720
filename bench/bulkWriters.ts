/**
 * The bulk endpoint's writers in process, without the database or HTTP: the rows per second of a
 * network's year (TUBES tubes × 35,136 rows of 15-minute data, in 2,000-row batches that cross tube
 * boundaries as the COPY decoder fills them) against one long series (527,040 rows of 1-minute data),
 * each written by the lifecycle's own chunking (planChunks of seriesStream.ts) and the representation of
 * its endpoint, in JSON, CSV and Arrow. It isolates what bench/bulk.ts measures over HTTP with the
 * database: the part of the bulk's rows/s that is the writers'. Timed by the process's CPU time
 * (process.cpuUsage: every thread, the garbage collector's too), which the other work of a shared
 * machine disturbs far less than the wall clock.
 *
 *   node --import tsx bench/bulkWriters.ts [ROUNDS] [TUBES]     (defaults 5, 200)
 */
import { randomUUID } from 'node:crypto';
import { emptyBatch, type MeasurementBatch } from '../src/engine/batch.js';
import { BATCH_SIZE, planChunks } from '../src/engine/document.js';
import type { SeriesHead } from '../src/engine/schemas.js';
import { arrowSeries } from '../src/engine/write/arrow.js';
import { arrowNetwork } from '../src/engine/write/arrowNetwork.js';
import { csvSeries } from '../src/engine/write/csv.js';
import { csvNetwork } from '../src/engine/write/csvNetwork.js';
import { jsonSeries } from '../src/engine/write/json.js';
import { jsonNetwork } from '../src/engine/write/jsonNetwork.js';
import type { NetworkRepresentation } from '../src/engine/write/networkWriter.js';
import type { SeriesRepresentation } from '../src/engine/write/writer.js';
import { requirePrerequisites } from '../testkit/prerequisites.js';
import { count, machineLine, median, ms, printTable, ratio } from '../testkit/report.js';

requirePrerequisites([]);

const ROUNDS = Number(process.argv[2] ?? 5);
const TUBES = Number(process.argv[3] ?? 200);
const START_MICROS = Date.parse('2024-01-01T00:00:00Z') * 1000;
const MINUTE_MICROS = 60_000_000;
const YEAR_MINUTES = 366 * 1440;
const FORMATS = ['json', 'csv', 'arrow'] as const;
type Format = (typeof FORMATS)[number];

/** `tubes` tubes of `rowsPerTube` rows every `stepMinutes`, in batches as the COPY decoder fills them. */
function batchesOf(tubes: number, rowsPerTube: number, stepMinutes: number): MeasurementBatch[] {
  const batches: MeasurementBatch[] = [];
  let batch = emptyBatch('raw', BATCH_SIZE);
  for (let tube = 0; tube < tubes; tube++) {
    for (let row = 0; row < rowsPerTube; row++) {
      const i = batch.length;
      const micros = START_MICROS + row * stepMinutes * MINUTE_MICROS;
      batch.tube[i] = tube;
      batch.observedAt[i] = micros;
      // As the benchmark fixtures: round(sin(epoch / 86400 + tube) * 2, 3).
      batch.value[i] = Math.round(Math.sin(micros / 86_400_000_000 + tube) * 2000) / 1000;
      batch.length = i + 1;
      if (batch.length === BATCH_SIZE) {
        batches.push(batch);
        batch = emptyBatch('raw', BATCH_SIZE);
      }
    }
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

const head = (tubeIdentifier: string): SeriesHead => ({
  tubeIdentifier,
  from: '2024-01-01T00:00:00Z',
  to: '2025-01-01T00:00:00Z',
  unit: 'm',
  verticalDatum: 'NAP',
});

const SERIES_WRITERS: Record<Format, () => SeriesRepresentation> = {
  json: () => jsonSeries,
  csv: () => csvSeries(),
  arrow: arrowSeries,
};
const NETWORK_WRITERS: Record<Format, () => NetworkRepresentation> = {
  json: jsonNetwork,
  csv: csvNetwork,
  arrow: arrowNetwork,
};

async function* each(batches: MeasurementBatch[]): AsyncGenerator<MeasurementBatch> {
  yield* batches;
}

/** Writes the document: its chunks and close, counted; the bytes and the time. */
async function write(
  batches: MeasurementBatch[],
  heads: SeriesHead[],
  representation: SeriesRepresentation,
  opening?: Buffer,
): Promise<{ ms: number; bytes: number }> {
  const started = process.cpuUsage();
  let bytes = 0;
  for await (const chunk of planChunks(
    { opening, tubes: heads, everyTube: true },
    each(batches),
    representation,
  ))
    bytes += chunk.length;
  bytes += representation.close().length;
  const { user, system } = process.cpuUsage(started);
  return { ms: (user + system) / 1000, bytes };
}

const seriesBatches = batchesOf(1, YEAR_MINUTES, 1);
const seriesHeads = [head(randomUUID())];
const networkRows = TUBES * (YEAR_MINUTES / 15);
const networkBatches = batchesOf(TUBES, YEAR_MINUTES / 15, 15);
const networkHeads = Array.from({ length: TUBES }, () => head(randomUUID()));
const networkHead = { from: networkHeads[0]!.from, to: networkHeads[0]!.to, syncToken: 'bench' };

const runs = {
  series: (format: Format) => write(seriesBatches, seriesHeads, SERIES_WRITERS[format]()),
  bulk: (format: Format) => {
    const writer = NETWORK_WRITERS[format]();
    return write(networkBatches, networkHeads, writer, writer.open(networkHead, networkHeads));
  },
};
const times = new Map<string, number[]>();
const bytes = new Map<string, number>();
console.log(`Bulk writers in process — ${await machineLine()}\n`);
for (let round = -1; round < ROUNDS; round++) {
  for (const format of FORMATS) {
    for (const kind of ['series', 'bulk'] as const) {
      const result = await runs[kind](format);
      const name = `${kind}, ${format}`;
      bytes.set(name, result.bytes);
      // Round -1 warms up.
      if (round >= 0) times.set(name, [...(times.get(name) ?? []), result.ms]);
    }
  }
}
console.log(
  `series: ${count(YEAR_MINUTES)} rows; bulk: ${TUBES} tubes × ${count(YEAR_MINUTES / 15)} rows = ` +
    `${count(networkRows)} rows; median of ${ROUNDS} rounds\n`,
);
const rowsPerSecond = (name: string, rows: number) => rows / (median(times.get(name)!) / 1000);
printTable(
  ['variant', 'CPU time', 'range', 'bytes/row', 'rows/s', 'vs series rows/s'],
  FORMATS.flatMap((format) =>
    (['series', 'bulk'] as const).map((kind) => {
      const name = `${kind}, ${format}`;
      const rows = kind === 'series' ? YEAR_MINUTES : networkRows;
      const all = times.get(name)!;
      return [
        name,
        ms(median(all)),
        `${ms(Math.min(...all))} – ${ms(Math.max(...all))}`,
        (bytes.get(name)! / rows).toFixed(1),
        count(rowsPerSecond(name, rows)),
        ratio(rowsPerSecond(name, rows) / rowsPerSecond(`series, ${format}`, YEAR_MINUTES)),
      ];
    }),
  ),
);

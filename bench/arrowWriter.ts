/**
 * Arrow record batches of a year of 1-minute data (264 batches of 2,000 rows, as the series streams
 * them), encoded in process two ways: ours (src/engine/write/arrowMessages.ts: the body laid out from the
 * batch's typed arrays, the metadata by apache-arrow's Message encoder) and apache-arrow's own
 * RecordBatchStreamWriter fed RecordBatches made from the same columns (the µs instants converted to
 * the BigInt64Array its timestamp vectors hold). Both streams are checked to be the same bytes first.
 *
 *   node --import tsx bench/arrowWriter.ts [ROUNDS]
 */
import {
  Field,
  Float64,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  TimestampMicrosecond,
} from 'apache-arrow';
import { emptyBatch, type MeasurementBatch } from '../src/engine/batch.js';
import {
  END_OF_STREAM,
  RAW_ARROW_COLUMNS,
  recordBatchMessage,
  schemaMessage,
} from '../src/engine/write/arrowMessages.js';
import { requirePrerequisites } from '../testkit/prerequisites.js';
import { machineLine, median, ms, printTable, ratio } from '../testkit/report.js';

requirePrerequisites([]);

const ROUNDS = Number(process.argv[2] ?? 9);
const BATCH_ROWS = 2000;
const YEAR_ROWS = 366 * 1440;
const START_MICROS = 1_704_067_200_000_000;

const batches: MeasurementBatch[] = [];
for (let first = 0; first < YEAR_ROWS; first += BATCH_ROWS) {
  const length = Math.min(BATCH_ROWS, YEAR_ROWS - first);
  const batch = emptyBatch('raw', length);
  for (let i = 0; i < length; i++) {
    batch.observedAt[i] = START_MICROS + (first + i) * 60_000_000;
    batch.value[i] = Math.round(Math.sin((first + i) / 1440) * 2000) / 1000;
  }
  batch.length = length;
  batches.push(batch);
}

const instantType = new TimestampMicrosecond('UTC');
const valueType = new Float64();
const fields = [new Field('observedAt', instantType, false), new Field('value', valueType, false)];
const metadata = new Map([['tubeIdentifier', 'bench']]);

function ours(): Buffer {
  const parts = [schemaMessage(fields, metadata)];
  for (const batch of batches) parts.push(recordBatchMessage(batch, RAW_ARROW_COLUMNS));
  parts.push(END_OF_STREAM);
  return Buffer.concat(parts);
}

function apacheArrowWriter(): Buffer {
  const schema = new Schema(fields, new Map(metadata));
  const writer = new RecordBatchStreamWriter();
  for (const batch of batches) {
    const instants = new BigInt64Array(batch.length);
    for (let i = 0; i < batch.length; i++) instants[i] = BigInt(batch.observedAt[i]!);
    const children = [
      makeData({ type: instantType, length: batch.length, nullCount: 0, data: instants }),
      makeData({ type: valueType, length: batch.length, nullCount: 0, data: batch.value }),
    ];
    const data = makeData({ type: new Struct(fields), length: batch.length, nullCount: 0, children });
    writer.write(new RecordBatch(schema, data));
  }
  writer.finish();
  return Buffer.from(writer.toUint8Array(true));
}

console.log(`Arrow writer benchmark — ${await machineLine()}\n`);
if (!ours().equals(apacheArrowWriter())) throw new Error('the two streams differ');
const times = { ours: [] as number[], apache: [] as number[] };
for (let round = -1; round < ROUNDS; round++) {
  for (const [name, encode] of [
    ['ours', ours],
    ['apache', apacheArrowWriter],
  ] as const) {
    const started = performance.now();
    encode();
    if (round >= 0) times[name].push(performance.now() - started);
  }
}
console.log(`a year of 1-minute data, ${batches.length} record batches; median of ${ROUNDS} rounds\n`);
printTable(
  ['encoder', 'median', 'vs ours'],
  [
    ['ours: body from the typed arrays, metadata by apache-arrow', ms(median(times.ours)), '1.00×'],
    [
      'apache-arrow RecordBatchStreamWriter',
      ms(median(times.apache)),
      ratio(median(times.apache) / median(times.ours)),
    ],
  ],
);

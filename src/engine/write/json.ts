/**
 * The series as `application/json`: a GroundwaterLevelSeries object whose head is written by a
 * serializer compiled at startup and whose `measurements` array is written batch by batch from the
 * batch's numbers (measurementText.ts): the bytes fast-json-stringify wrote for the same rows.
 */
import { compileSerializer } from '../../domain/jsonSchema.js';
import type { MeasurementBatch } from '../batch.js';
import { SeriesHead } from '../schemas.js';
import { AsciiWriter } from './text.js';
import type { SeriesRepresentation } from './writer.js';

const serializeHead = compileSerializer(SeriesHead);

const CLOSING = Buffer.from(']}');

const ROW_START = Buffer.from(',{"observedAt":"');
const VALUE = Buffer.from('","value":');
const MIN = Buffer.from(',"min":');
const MAX = Buffer.from(',"max":');
const COUNT = Buffer.from(',"count":');
const ROW_END = Buffer.from('}');
/** Bytes a row can take at most: the pieces above, an instant (27) and each number (25). */
const RAW_ROW_BYTES = ROW_START.length + 27 + VALUE.length + 25 + ROW_END.length;
const AGGREGATED_ROW_BYTES = RAW_ROW_BYTES + MIN.length + MAX.length + COUNT.length + 3 * 25;

const writer = new AsciiWriter();

/**
 * The elements of `batch`, comma-separated, with a leading comma unless it is the first batch: what
 * fast-json-stringify wrote for the same rows, from the numbers (measurementText.ts).
 */
function measurementsJson(batch: MeasurementBatch, first: boolean): Buffer {
  const { length, observedAt, value, min, max, count } = batch;
  writer.reserve(length * (count ? AGGREGATED_ROW_BYTES : RAW_ROW_BYTES));
  for (let i = 0; i < length; i++) {
    writer.bytes(ROW_START);
    writer.instant(observedAt[i]!);
    writer.bytes(VALUE);
    writer.number(value[i]!);
    if (count) {
      writer.bytes(MIN);
      writer.number(min![i]!);
      writer.bytes(MAX);
      writer.number(max![i]!);
      writer.bytes(COUNT);
      writer.number(count[i]!);
    }
    writer.bytes(ROW_END);
  }
  const json = writer.take();
  return first ? json.subarray(1) : json;
}

export const jsonSeries: SeriesRepresentation = {
  mediaType: 'application/json',
  head: (head) => Buffer.from(`${serializeHead(head).slice(0, -1)},"measurements":[`),
  batch: measurementsJson,
  close: () => CLOSING,
};

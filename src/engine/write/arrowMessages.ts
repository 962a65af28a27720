/**
 * Apache Arrow IPC stream messages (https://arrow.apache.org/docs/format/Columnar.html, "IPC Streaming
 * Format"), in small parts that any endpoint puts together: the schema, record batches made straight
 * from MeasurementBatch columns, dictionary batches of utf8 values with int32 (or int8) indices, and
 * the end-of-stream marker. Every message's metadata (its flatbuffer) is encoded by apache-arrow; the
 * record batch bodies are laid out here from the typed arrays, without building Arrow vectors.
 *
 * Each message: continuation marker (0xFFFFFFFF), metadata length, flatbuffer padded to 8 bytes, then
 * the body, whose buffers each start at a multiple of 8. Metadata version V5, little-endian, no buffer
 * compression, no validity buffers (no column is nullable).
 */
import { endianness } from 'node:os';
import {
  type DataType,
  Dictionary,
  Field,
  Float64,
  Int8,
  Int32,
  Int64,
  Schema,
  TimestampMicrosecond,
  Utf8,
} from 'apache-arrow';
import {
  BufferRegion,
  DictionaryBatch,
  FieldNode,
  Message,
  RecordBatch,
} from 'apache-arrow/ipc/metadata/message';
import type { MeasurementBatch } from '../batch.js';

// Typed arrays are copied into the body as they are: their bytes must already be Arrow's order.
if (endianness() !== 'LE') throw new Error('the Arrow writer needs a little-endian machine');

/** The end of an IPC stream: a continuation marker and a metadata length of 0. */
export const END_OF_STREAM: Buffer = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** A column of a MeasurementBatch as an Arrow field of the same name. */
export type BatchColumn = 'observedAt' | 'value' | 'min' | 'max' | 'count';

const BATCH_COLUMN_TYPES: Record<BatchColumn, DataType> = {
  observedAt: new TimestampMicrosecond('UTC'),
  value: new Float64(),
  min: new Float64(),
  max: new Float64(),
  count: new Int64(),
};

/** The columns of a raw series and of an aggregated one. */
export const RAW_ARROW_COLUMNS: readonly BatchColumn[] = ['observedAt', 'value'];
export const AGGREGATED_ARROW_COLUMNS: readonly BatchColumn[] = [
  'observedAt',
  'value',
  'min',
  'max',
  'count',
];

/** Non-nullable fields of batch columns. */
export const batchFields = (columns: readonly BatchColumn[]): Field[] =>
  columns.map((column) => new Field(column, BATCH_COLUMN_TYPES[column], false));

/**
 * A non-nullable utf8 field whose values are int32 indices into dictionary `id` (sent once, whole), or
 * int8 ones for a dictionary of a few values known up front (the statuses).
 */
export const dictionaryField = (name: string, id: number, indices: 'int32' | 'int8' = 'int32'): Field =>
  new Field(
    name,
    new Dictionary(new Utf8(), indices === 'int8' ? new Int8() : new Int32(), id, false),
    false,
  );

const ALIGNMENT = 8;
const padded = (bytes: number) => Math.ceil(bytes / ALIGNMENT) * ALIGNMENT;

/**
 * A message of `message` and a body of `bodyBytes`, zero-filled (the padding between buffers stays
 * zeros): continuation marker, metadata length, metadata padded, then the body at `bodyAt`, a multiple
 * of 8 from the start of the message's own ArrayBuffer, so that typed arrays can be laid over it.
 */
function frame(message: Message, bodyBytes: number): { framed: Buffer; bodyAt: number } {
  const metadata = Message.encode(message);
  // The length counts the flatbuffer and its padding; with the 8-byte prefix the body starts aligned.
  const metadataBytes = padded(metadata.byteLength + 8) - 8;
  // Buffer.alloc never takes a slice of the shared pool: its byteOffset is 0.
  const framed = Buffer.alloc(8 + metadataBytes + bodyBytes);
  framed.writeInt32LE(-1, 0);
  framed.writeInt32LE(metadataBytes, 4);
  framed.set(metadata, 8);
  return { framed, bodyAt: 8 + metadataBytes };
}

/** Continuation marker, metadata length, metadata padded, then `body` (already laid out). */
function framed(message: Message, body?: Buffer): Buffer {
  const { framed, bodyAt } = frame(message, body?.length ?? 0);
  if (body) framed.set(body, bodyAt);
  return framed;
}

/** The schema message: `fields` and the schema's custom metadata (string keys and values). */
export function schemaMessage(fields: Field[], metadata: ReadonlyMap<string, string>): Buffer {
  return framed(Message.from(new Schema(fields, new Map(metadata))));
}

/**
 * A body being laid out: each buffer at a multiple of 8, with its region; every field node has no
 * nulls and an empty validity buffer.
 */
class BodyLayout {
  readonly nodes: FieldNode[] = [];
  readonly regions: BufferRegion[] = [];
  private bytes = 0;

  /** A field of `length` values whose buffers (after the validity one) are `byteLengths` long. */
  field(length: number, ...byteLengths: number[]): number[] {
    this.nodes.push(new FieldNode(length, 0));
    this.regions.push(new BufferRegion(this.bytes, 0));
    return byteLengths.map((byteLength) => {
      const offset = this.bytes;
      this.regions.push(new BufferRegion(offset, byteLength));
      this.bytes = padded(offset + byteLength);
      return offset;
    });
  }

  get byteLength(): number {
    return this.bytes;
  }
}

const TWO_TO_32 = 4_294_967_296;

/** Integral doubles (|x| < 2^53) as little-endian int64s into `body` at `offset`. */
function writeInt64s(body: Buffer, offset: number, values: Float64Array, length: number): void {
  const words = new Int32Array(body.buffer, body.byteOffset + offset, 2 * length);
  for (let i = 0; i < length; i++) {
    const value = values[i]!;
    const high = Math.floor(value / TWO_TO_32);
    // The low word's value 0 to 2^32 - 1: an Int32Array keeps its bits.
    words[2 * i] = value - high * TWO_TO_32;
    words[2 * i + 1] = high;
  }
}

/**
 * A column of dictionary indices beside the batch columns of a record batch: one per row (int32, or
 * int8 as the statuses), or one int32 for every row (the unit of a batch of one tube's rows, say),
 * written into the body without an array.
 */
export type IndexColumn = { indices: Int32Array | Int8Array } | { constant: number };

const indexBytes = (column: IndexColumn) => ('indices' in column ? column.indices.BYTES_PER_ELEMENT : 4);

/**
 * A record batch message of `batch`'s rows, its fields in the schema's order: the `leading` index
 * columns (dictionary fields before the batch columns), then `columns`, then the `trailing` ones. The
 * body is laid out in the message's own buffer, straight from the typed arrays.
 */
export function recordBatchMessage(
  batch: MeasurementBatch,
  columns: readonly BatchColumn[],
  leading: readonly IndexColumn[] = [],
  trailing: readonly IndexColumn[] = [],
): Buffer {
  const { length } = batch;
  const layout = new BodyLayout();
  const indexOffset = (column: IndexColumn) => layout.field(length, indexBytes(column) * length)[0]!;
  const leadingOffsets = leading.map(indexOffset);
  const columnOffsets = columns.map(() => layout.field(length, 8 * length)[0]!);
  const trailingOffsets = trailing.map(indexOffset);
  const header = new RecordBatch(length, layout.nodes, layout.regions, null);
  const { framed, bodyAt } = frame(Message.from(header, layout.byteLength), layout.byteLength);
  const writeIndices = (indexColumns: readonly IndexColumn[], offsets: number[]) =>
    indexColumns.forEach((column, i) => {
      const at = framed.byteOffset + bodyAt + offsets[i]!;
      if ('indices' in column) {
        const { indices } = column;
        const target =
          indices instanceof Int8Array
            ? new Int8Array(framed.buffer, at, length)
            : new Int32Array(framed.buffer, at, length);
        target.set(indices.subarray(0, length));
      } else if (column.constant !== 0) new Int32Array(framed.buffer, at, length).fill(column.constant);
    });
  writeIndices(leading, leadingOffsets);
  const body = framed.subarray(bodyAt);
  columns.forEach((column, i) => {
    const values = batch[column]!;
    const offset = columnOffsets[i]!;
    if (column === 'observedAt' || column === 'count') writeInt64s(body, offset, values, length);
    else new Float64Array(body.buffer, body.byteOffset + offset, length).set(values.subarray(0, length));
  });
  writeIndices(trailing, trailingOffsets);
  return framed;
}

/** A dictionary batch: the whole dictionary `id`, its `values` in index order, as utf8. */
export function dictionaryBatchMessage(id: number, values: readonly string[]): Buffer {
  const encoded = values.map((value) => Buffer.from(value, 'utf8'));
  const dataBytes = encoded.reduce((sum, value) => sum + value.length, 0);
  const layout = new BodyLayout();
  const [offsetsAt, dataAt] = layout.field(values.length, 4 * (values.length + 1), dataBytes) as [
    number,
    number,
  ];
  const body = Buffer.alloc(layout.byteLength);
  let end = 0;
  body.writeInt32LE(0, offsetsAt);
  encoded.forEach((value, i) => {
    body.set(value, dataAt + end);
    end += value.length;
    body.writeInt32LE(end, offsetsAt + 4 * (i + 1));
  });
  const data = new RecordBatch(values.length, layout.nodes, layout.regions, null);
  return framed(Message.from(new DictionaryBatch(data, id, false), layout.byteLength), body);
}

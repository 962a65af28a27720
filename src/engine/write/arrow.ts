/**
 * Apache Arrow IPC streams (messages: arrowMessages.ts).
 *
 * A series: the schema with the series head as its custom metadata, one record batch per batch, and the
 * end-of-stream marker in the close. A network: `tubeIdentifier`, the series' columns, then `unit` and
 * `verticalDatum`; the three strings dictionary-encoded (int32 indices into utf8), each dictionary
 * sent once, whole, after the schema and before the first batch: every tube of the document is known
 * when it opens. A row's `tube` (its tube's position in the document) is its index into the
 * identifiers' dictionary as it is.
 *
 * With the status (WriterOptions.statuses), a `status` column right after `value`, dictionary-encoded
 * with int8 indices: the status code is the index, and the dictionary, every name the writer was given,
 * is sent after the schema (and the network's other dictionaries) like theirs.
 */
import type { MeasurementBatch } from '../batch.js';
import type { NetworkHead, SeriesHead } from '../schemas.js';
import {
  AGGREGATED_ARROW_COLUMNS,
  type BatchColumn,
  batchFields,
  dictionaryBatchMessage,
  dictionaryField,
  END_OF_STREAM,
  type IndexColumn,
  RAW_ARROW_COLUMNS,
  recordBatchMessage,
  schemaMessage,
} from './arrowMessages.js';
import {
  type Format,
  type LatestTube,
  type LatestWriter,
  madeOncePerList,
  type NetworkWriter,
  type SeriesWriter,
  type WriterOptions,
} from './writer.js';

const NOTHING = Buffer.alloc(0);

/** The head's fields as the schema's metadata, in the JSON head's order; `aggregate` when given. */
export function seriesMetadata(head: SeriesHead): Map<string, string> {
  const metadata = new Map<string, string>([
    ['tubeIdentifier', head.tubeIdentifier],
    ['from', head.from],
    ['to', head.to],
  ]);
  if (head.aggregate) metadata.set('aggregate', head.aggregate);
  metadata.set('unit', head.unit);
  metadata.set('verticalDatum', head.verticalDatum);
  return metadata;
}

const STATUS_FIELD = 'status';

/** The status column of a record batch: each row's code is its index. */
function statusIndices(rows: MeasurementBatch): IndexColumn[] {
  if (!rows.status) throw new Error('a batch without the status its writer writes');
  return [{ indices: rows.status }];
}

/** The series' only dictionary: the statuses, when written. */
const SERIES_STATUSES = 0;

/** A fresh one per response: it keeps the columns the head chose (raw or aggregated). */
function seriesWriter({ statuses }: WriterOptions = {}): SeriesWriter {
  let columns: readonly BatchColumn[] = RAW_ARROW_COLUMNS;
  let withStatus = false;
  return {
    head(head) {
      columns = head.aggregate ? AGGREGATED_ARROW_COLUMNS : RAW_ARROW_COLUMNS;
      // A bucket has no single status: an aggregated series never carries one.
      withStatus = statuses !== undefined && !head.aggregate;
      if (!withStatus) return schemaMessage(batchFields(columns), seriesMetadata(head));
      return Buffer.concat([
        schemaMessage(
          [...batchFields(columns), dictionaryField(STATUS_FIELD, SERIES_STATUSES, 'int8')],
          seriesMetadata(head),
        ),
        dictionaryBatchMessage(SERIES_STATUSES, statuses!),
      ]);
    },
    batch: (batch) => recordBatchMessage(batch, columns, [], withStatus ? statusIndices(batch) : []),
    close: () => END_OF_STREAM,
  };
}

/** The dictionaries, by id: the order of their fields in the schema. */
const TUBES = 0;
const UNITS = 1;
const DATUMS = 2;
const STATUSES = 3;

/**
 * The schema's fields of rows of many tubes (the network's and latest's): the tube, the batch's columns,
 * the status when it is written, the unit and the datum.
 */
const manyTubesFields = (columns: readonly BatchColumn[], withStatus: boolean) => [
  dictionaryField('tubeIdentifier', TUBES),
  ...batchFields(columns),
  ...(withStatus ? [dictionaryField(STATUS_FIELD, STATUSES, 'int8')] : []),
  dictionaryField('unit', UNITS),
  dictionaryField('verticalDatum', DATUMS),
];

/** The distinct values of `texts` in order of appearance, and each text's index among them. */
function dictionary(texts: readonly string[]): { values: string[]; indexOf: Int32Array } {
  const indices = new Map<string, number>();
  const indexOf = Int32Array.from(texts, (text) => {
    const known = indices.get(text);
    if (known !== undefined) return known;
    indices.set(text, indices.size);
    return indices.size - 1;
  });
  return { values: [...indices.keys()], indexOf };
}

/** The network head's fields as the schema's metadata: `aggregate` when given. */
function networkMetadata({ from, to, aggregate, syncToken }: NetworkHead): Map<string, string> {
  const metadata = new Map([
    ['from', from],
    ['to', to],
  ]);
  if (aggregate) metadata.set('aggregate', aggregate);
  metadata.set('syncToken', syncToken);
  return metadata;
}

/** A fresh one per response: it keeps the columns and each tube's unit and datum index. */
function networkWriter({ statuses }: WriterOptions = {}): NetworkWriter {
  let columns: readonly BatchColumn[] = RAW_ARROW_COLUMNS;
  let withStatus = false;
  let unitOf: Int32Array = new Int32Array(0);
  let datumOf: Int32Array = new Int32Array(0);
  return {
    open(head, tubes) {
      columns = head.aggregate ? AGGREGATED_ARROW_COLUMNS : RAW_ARROW_COLUMNS;
      withStatus = statuses !== undefined && !head.aggregate;
      const units = dictionary(tubes.map((tube) => tube.unit));
      const datums = dictionary(tubes.map((tube) => tube.verticalDatum));
      unitOf = units.indexOf;
      datumOf = datums.indexOf;
      return Buffer.concat([
        schemaMessage(manyTubesFields(columns, withStatus), networkMetadata(head)),
        dictionaryBatchMessage(
          TUBES,
          tubes.map((tube) => tube.tubeIdentifier),
        ),
        dictionaryBatchMessage(UNITS, units.values),
        dictionaryBatchMessage(DATUMS, datums.values),
        ...(withStatus ? [dictionaryBatchMessage(STATUSES, statuses!)] : []),
      ]);
    },
    head: () => NOTHING,
    // The lifecycle hands over one tube's rows at a time: its identifier, unit and datum are one index
    // each.
    batch(rows) {
      const tube = rows.tube[0]!;
      return recordBatchMessage(
        rows,
        columns,
        [{ constant: tube }],
        [
          ...(withStatus ? statusIndices(rows) : []),
          { constant: unitOf[tube]! },
          { constant: datumOf[tube]! },
        ],
      );
    },
    close: () => END_OF_STREAM,
  };
}

export const arrow: Format = {
  name: 'arrow',
  mediaType: 'application/vnd.apache.arrow.stream',
  extension: 'arrows',
  series: seriesWriter,
  network: networkWriter,
  latest: latestWriter,
};

/** The dictionaries of each list of tubes, and each tube's index in the units' and the datums'. */
const latestDictionaries = new WeakMap<
  readonly LatestTube[],
  { unitOf: Int32Array; datumOf: Int32Array; messages: Buffer }
>();

/**
 * The Arrow of latest: the network's columns and dictionaries (every tube of the document in the
 * identifiers' dictionary, in its order, so a row's `tube` is its index as it is; `status` after `value`
 * with the statuses), a record batch per batch of rows of many tubes, each row's unit and datum looked
 * up by its tube.
 */
function latestWriter({ statuses }: WriterOptions = {}): LatestWriter {
  let unitOf: Int32Array = new Int32Array(0);
  let datumOf: Int32Array = new Int32Array(0);
  return {
    open(tubes) {
      const made = madeOncePerList(latestDictionaries, tubes, () => {
        const units = dictionary(tubes.map((tube) => tube.unit));
        const datums = dictionary(tubes.map((tube) => tube.verticalDatum));
        const messages = Buffer.concat([
          dictionaryBatchMessage(
            TUBES,
            tubes.map((tube) => tube.tubeIdentifier),
          ),
          dictionaryBatchMessage(UNITS, units.values),
          dictionaryBatchMessage(DATUMS, datums.values),
        ]);
        return { unitOf: units.indexOf, datumOf: datums.indexOf, messages };
      });
      unitOf = made.unitOf;
      datumOf = made.datumOf;
      return Buffer.concat([
        schemaMessage(manyTubesFields(RAW_ARROW_COLUMNS, statuses !== undefined), new Map()),
        made.messages,
        ...(statuses ? [dictionaryBatchMessage(STATUSES, statuses)] : []),
      ]);
    },
    batch(rows) {
      const tubes = rows.tube.subarray(0, rows.length);
      return recordBatchMessage(
        rows,
        RAW_ARROW_COLUMNS,
        [{ indices: tubes }],
        [
          ...(statuses ? statusIndices(rows) : []),
          { indices: tubes.map((tube) => unitOf[tube]!) },
          { indices: tubes.map((tube) => datumOf[tube]!) },
        ],
      );
    },
    close: () => END_OF_STREAM,
  };
}

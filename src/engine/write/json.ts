/**
 * JSON. A series is a GroundwaterLevelSeries object whose head is written by a serializer compiled at
 * startup and whose `measurements` array is written batch by batch from the batch's numbers (text.ts):
 * the bytes fast-json-stringify wrote for the same rows. A network is its head, then `"series"`, whose
 * elements are written by the series' own writer, so that each is byte for byte what the series
 * endpoint gives for its tube.
 */
import { compileSerializer } from '../../domain/jsonSchema.js';
import type { MeasurementBatch } from '../batch.js';
import { NetworkHead, SeriesHead } from '../schemas.js';
import { AsciiWriter } from './text.js';
import {
  type Format,
  type LatestTube,
  type LatestWriter,
  madeOncePerList,
  type NetworkWriter,
  type SeriesWriter,
  type WriterOptions,
} from './writer.js';

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
 * `,"status":"…"}` of each status code, as `statuses` names them (WriterOptions): the field and the end
 * of its row in one piece, one copy per row.
 */
const statusFields = (statuses: readonly string[]): Buffer[] =>
  statuses.map((status) => Buffer.from(`,"status":${JSON.stringify(status)}}`));

/**
 * The elements of `batch`, comma-separated, with a leading comma unless it is the first batch: what
 * fast-json-stringify wrote for the same rows, from the numbers (measurementText.ts); each with its
 * status field when the writer has `statusFields`.
 */
function measurementsJson(batch: MeasurementBatch, first: boolean, statusFields?: Buffer[]): Buffer {
  const { length, observedAt, value, min, max, count } = batch;
  const status = statusFields && batch.status;
  if (statusFields && !status) throw new Error('a batch without the status its writer writes');
  const statusBytes = status ? Math.max(...statusFields.map((field) => field.length)) : 0;
  writer.reserve(length * ((count ? AGGREGATED_ROW_BYTES : RAW_ROW_BYTES) + statusBytes));
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
    // A row has its status or min, max and count, never both (a bucket has no single status).
    writer.bytes(status ? statusFields![status[i]!]! : ROW_END);
  }
  const json = writer.take();
  return first ? json.subarray(1) : json;
}

const seriesHead = (head: SeriesHead) => Buffer.from(`${serializeHead(head).slice(0, -1)},"measurements":[`);

/** Stateless: one writer serves every series response without the status, one more each with it. */
const seriesWriter = (statuses?: readonly string[]): SeriesWriter => {
  const fields = statuses && statusFields(statuses);
  return {
    head: seriesHead,
    batch: (batch, first) => measurementsJson(batch, first, fields),
    close: () => CLOSING,
    wholeOnlyWithClose: true,
  };
};
const SERIES_WRITER = seriesWriter();

/**
 * The network's head but its token, whose place is last: the serializer writes optional fields
 * (`aggregate`) after required ones, and the head's order is from, to, aggregate, syncToken.
 */
const serializeInterval = compileSerializer(NetworkHead.omit({ syncToken: true }));

/** What ends one element before the next begins: the series' own close, then a comma. */
const BETWEEN_SERIES = Buffer.concat([CLOSING, Buffer.from(',')]);
const NETWORK_CLOSING = Buffer.from(']}');

/** A fresh one per response: it knows whether a series has begun, which then needs its close. */
function networkWriter({ statuses }: WriterOptions = {}): NetworkWriter {
  const fields = statuses && statusFields(statuses);
  let seriesBegun = false;
  return {
    open: ({ syncToken, ...interval }) =>
      Buffer.from(
        `${serializeInterval(interval).slice(0, -1)},"syncToken":${JSON.stringify(syncToken)},"series":[`,
      ),
    head(head) {
      const series = seriesHead(head);
      if (!seriesBegun) {
        seriesBegun = true;
        return series;
      }
      return Buffer.concat([BETWEEN_SERIES, series]);
    },
    batch: (batch, first) => measurementsJson(batch, first, fields),
    close: () => (seriesBegun ? Buffer.concat([CLOSING, NETWORK_CLOSING]) : NETWORK_CLOSING),
    wholeOnlyWithClose: true,
  };
}

export const json: Format = {
  name: 'json',
  mediaType: 'application/json',
  extension: undefined,
  series: (options) => (options?.statuses ? seriesWriter(options.statuses) : SERIES_WRITER),
  network: networkWriter,
  latest: (options) => latestJsonWriter(LATEST_JSON, options),
};

/** The constant bytes of a latest document's JSON: its opening and closing, and each tube's pieces. */
export interface LatestJsonPieces {
  opening: Buffer;
  closing: Buffer;
  /** Each row of the tube starts with `before`, its instant follows, and it ends with `after`. */
  tube(tube: LatestTube): { before: Buffer; after: Buffer };
  /** The pieces of each list of tubes, made once (madeOncePerList). */
  made: WeakMap<readonly LatestTube[], { befores: Buffer[]; afters: Buffer[] }>;
}

const LATEST_VALUE = Buffer.from('","value":');
const COMMA = Buffer.from(',');

/**
 * The JSON of a latest document, one object per row, comma-separated: the pieces of the row's tube
 * around `observedAt`, `value` and, with the statuses' names, `status`; times and numbers as a series
 * writes them. JSON's own and GeoJSON's (geojson.ts).
 */
export function latestJsonWriter(pieces: LatestJsonPieces, { statuses }: WriterOptions = {}): LatestWriter {
  // The status field alone: the row goes on with the tube's own fields.
  const fields = statuses?.map((status) => Buffer.from(`,"status":${JSON.stringify(status)}`));
  const fieldBytes = fields ? Math.max(...fields.map((field) => field.length)) : 0;
  let befores: Buffer[] = [];
  let afters: Buffer[] = [];
  return {
    open(tubes) {
      ({ befores, afters } = madeOncePerList(pieces.made, tubes, () => {
        const tubePieces = tubes.map(pieces.tube);
        return {
          befores: tubePieces.map(({ before }) => before),
          afters: tubePieces.map(({ after }) => after),
        };
      }));
      return pieces.opening;
    },
    batch(batch, first) {
      const { length, tube, observedAt, value, status } = batch;
      if (fields && !status) throw new Error('a batch without the status its writer writes');
      for (let i = 0; i < length; i++) {
        const before = befores[tube[i]!]!;
        const after = afters[tube[i]!]!;
        writer.reserve(1 + before.length + 27 + LATEST_VALUE.length + 25 + fieldBytes + after.length);
        if (i > 0 || !first) writer.bytes(COMMA);
        writer.bytes(before);
        writer.instant(observedAt[i]!);
        writer.bytes(LATEST_VALUE);
        writer.number(value[i]!);
        if (fields) writer.bytes(fields[status![i]!]!);
        writer.bytes(after);
      }
      return writer.take();
    },
    close: () => pieces.closing,
    wholeOnlyWithClose: true,
  };
}

/** The properties a latest row's JSON object shares with its GeoJSON Feature, in the JSON's order. */
export const latestFields = (tube: LatestTube) => ({
  before: `"tubeIdentifier":${JSON.stringify(tube.tubeIdentifier)},"observedAt":"`,
  after: `,"unit":${JSON.stringify(tube.unit)},"verticalDatum":${JSON.stringify(tube.verticalDatum)}`,
});

/** `[{"tubeIdentifier", "observedAt", "value", ("status"), "unit", "verticalDatum"}, …]` */
const LATEST_JSON: LatestJsonPieces = {
  opening: Buffer.from('['),
  closing: Buffer.from(']'),
  made: new WeakMap(),
  tube(tube) {
    const { before, after } = latestFields(tube);
    return { before: Buffer.from(`{${before}`), after: Buffer.from(`${after}}`) };
  },
};

/**
 * CSV (RFC 4180): a header line, then one line per measurement, each repeating the tube's unit and
 * vertical datum; in a network's file each line starts with its tube's identifier. Times and numbers
 * are written as in the JSON.
 *
 * Every line after the header starts with the CRLF that ends the line before it, and the last CRLF is
 * the close, which the lifecycle writes only once the snapshot ended well. So, as the JSON's `]}`, a
 * CSV ends in CRLF only when it is whole: a cut-off one (which the client also sees as a chunked body
 * without its last chunk) ends in the middle of a line.
 */
import type { MeasurementBatch } from '../batch.js';
import type { SeriesHead } from '../schemas.js';
import { AsciiWriter } from './text.js';
import {
  type Format,
  type LatestTube,
  type LatestWriter,
  madeOncePerList,
  type NetworkWriter,
  type WriterOptions,
} from './writer.js';

const CRLF = '\r\n';
const CRLF_BYTES = Buffer.from(CRLF);
const CLOSING = CRLF_BYTES;

/** The last columns of every line: the same on each line of a response. */
const CONSTANT_COLUMNS = ['unit', 'verticalDatum'] as const;

/**
 * A column of a batch: its name (the batch's field and the header's name), and how its text is written
 * (a status as the name of its code).
 */
type Column = readonly [name: string, kind: 'instant' | 'number' | 'status'];

/**
 * The constant bytes around a tube's lines, made once per tube (linePieces): what the first line starts
 * with, what comes between two lines, and what the last one ends with.
 */
export interface LinePieces {
  /** CRLF, then the lead (the tube column of a file of many tubes). */
  readonly start: Buffer;
  /** The constant columns (unit and datum), CRLF and the lead: one copy per line. */
  readonly between: Buffer;
  /** The constant columns. */
  readonly end: Buffer;
}

/** The pieces of lines that start with `lead` and end in `constant`. */
export const linePieces = (lead: Buffer, constant: Buffer): LinePieces => ({
  start: Buffer.concat([CRLF_BYTES, lead]),
  between: Buffer.concat([constant, CRLF_BYTES, lead]),
  end: constant,
});

/** The columns of one kind of series: its header line, and the formatter of a batch. */
export interface CsvColumns {
  readonly header: string;
  /** The lines of `batch`, each after a CRLF, starting and ending with a tube's constant columns. */
  readonly lines: (batch: MeasurementBatch, pieces: LinePieces) => Buffer;
}

const COLUMN_NAME = /^[A-Za-z][A-Za-z0-9]*$/;
/** Bytes a field can take at most: an instant 27, a number 25, and the comma before it. */
const FIELD_BYTES = 1 + 27;

const writer = new AsciiWriter();

/**
 * Compiles the formatter of `columns` once: a loop that writes each line's fields from the batch's
 * numbers, as the JSON writes them (measurementText.ts), with the constant bytes between two lines
 * (the tube column of the next, say) copied as one piece. Generated code, as fast-json-stringify's is,
 * so that no per-column loop or lookup runs per row.
 */
export function csvColumns(columns: readonly Column[], statuses: readonly string[] = []): CsvColumns {
  const fields = columns.map(([name, kind], i) => {
    if (!COLUMN_NAME.test(name)) throw new Error(`not a column name: ${name}`);
    const text =
      kind === 'status' ? `writer.bytes(STATUSES[batch.${name}[i]]);` : `writer.${kind}(batch.${name}[i]);`;
    return `${i === 0 ? '' : 'writer.bytes(COMMA); '}${text}`;
  });
  const statusNames = statuses.map((status) => Buffer.from(csvField(status)));
  const lines = new Function(
    'writer',
    'COMMA',
    'STATUSES',
    `return function csvLines(batch, pieces) {
      const length = batch.length;
      if (length === 0) return writer.take();
      writer.reserve(pieces.start.length + length * (${FIELD_BYTES * columns.length} + pieces.between.length));
      writer.bytes(pieces.start);
      for (let i = 0; i < length; i++) {
        if (i > 0) writer.bytes(pieces.between);
        ${fields.join('\n        ')}
      }
      writer.bytes(pieces.end);
      return writer.take();
    }`,
  )(writer, Buffer.from(','), statusNames) as CsvColumns['lines'];
  return { header: [...columns.map(([name]) => name), ...CONSTANT_COLUMNS].join(','), lines };
}

/** The columns of a raw series. */
export const RAW_COLUMNS = csvColumns([
  ['observedAt', 'instant'],
  ['value', 'number'],
]);

/** The columns of an aggregated series: bucket start, mean, and the bucket's min, max and count. */
export const AGGREGATED_COLUMNS = csvColumns([
  ['observedAt', 'instant'],
  ['value', 'number'],
  ['min', 'number'],
  ['max', 'number'],
  ['count', 'number'],
]);

/** One field as RFC 4180 writes it: in double quotes, with its quotes doubled, when it needs them. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The columns of a raw series with each measurement's status, by the names of WriterOptions.statuses. */
const withStatusColumns = new WeakMap<readonly string[], CsvColumns>();
function rawWithStatusColumns(statuses: readonly string[]): CsvColumns {
  let columns = withStatusColumns.get(statuses);
  if (!columns) {
    columns = csvColumns(
      [
        ['observedAt', 'instant'],
        ['value', 'number'],
        ['status', 'status'],
      ],
      statuses,
    );
    withStatusColumns.set(statuses, columns);
  }
  return columns;
}

/** The first column of a CSV of many tubes (`tubeColumn`). */
const TUBE_COLUMN = 'tubeIdentifier';

const NOTHING = Buffer.alloc(0);

/**
 * A CSV writer for one response: it keeps what the head says for its lines, the columns (raw or
 * aggregated) and the unit and datum, quoted once: a fresh one per response for that reason. With
 * `tubeColumn`, each line starts with its tube's identifier, so the lines of many
 * tubes make one file: the header then comes from `open`, and a tube's head writes nothing.
 */
export function csvWriter({
  tubeColumn = false,
  statuses,
}: WriterOptions & { tubeColumn?: boolean } = {}): NetworkWriter {
  const raw = statuses ? rawWithStatusColumns(statuses) : RAW_COLUMNS;
  let columns = raw;
  let pieces = linePieces(NOTHING, NOTHING);
  const header = ({ aggregate }: Pick<SeriesHead, 'aggregate'>) => {
    columns = aggregate ? AGGREGATED_COLUMNS : raw;
    return Buffer.from(tubeColumn ? `${TUBE_COLUMN},${columns.header}` : columns.header);
  };
  return {
    open: header,
    head(head) {
      pieces = linePieces(
        tubeColumn ? Buffer.from(`${csvField(head.tubeIdentifier)},`) : NOTHING,
        Buffer.from(`,${csvField(head.unit)},${csvField(head.verticalDatum)}`),
      );
      return tubeColumn ? NOTHING : header(head);
    },
    batch: (batch) => columns.lines(batch, pieces),
    close: () => CLOSING,
    wholeOnlyWithClose: true,
  };
}

export const csv: Format = {
  name: 'csv',
  mediaType: 'text/csv; charset=utf-8; header=present',
  extension: 'csv',
  series: (options) => csvWriter(options),
  network: (options) => csvWriter({ ...options, tubeColumn: true }),
  latest: latestWriter,
};

const LATEST_COMMA = Buffer.from(',');

/** The constant pieces of each tube's line, per list of tubes. */
const latestLines = new WeakMap<readonly LatestTube[], { starts: Buffer[]; ends: Buffer[] }>();

/**
 * The CSV of latest: the network's columns (`status` after `value` with the statuses' names), a line
 * per row, each line after the CRLF that ends the one before, so that only the close makes it whole.
 */
function latestWriter({ statuses }: WriterOptions = {}): LatestWriter {
  const statusFields = statuses?.map((status) => Buffer.from(`,${csvField(status)}`));
  const statusBytes = statusFields ? Math.max(...statusFields.map((field) => field.length)) : 0;
  let starts: Buffer[] = [];
  let ends: Buffer[] = [];
  return {
    open(tubes) {
      ({ starts, ends } = madeOncePerList(latestLines, tubes, () => ({
        starts: tubes.map((tube) => Buffer.from(`${CRLF}${csvField(tube.tubeIdentifier)},`)),
        ends: tubes.map((tube) => Buffer.from(`,${csvField(tube.unit)},${csvField(tube.verticalDatum)}`)),
      })));
      const columns = [
        TUBE_COLUMN,
        'observedAt',
        'value',
        ...(statuses ? ['status'] : []),
        ...CONSTANT_COLUMNS,
      ];
      return Buffer.from(columns.join(','));
    },
    batch(batch) {
      const { length, tube, observedAt, value, status } = batch;
      if (statusFields && !status) throw new Error('a batch without the status its writer writes');
      for (let i = 0; i < length; i++) {
        const start = starts[tube[i]!]!;
        const end = ends[tube[i]!]!;
        writer.reserve(start.length + 27 + 1 + 25 + statusBytes + end.length);
        writer.bytes(start);
        writer.instant(observedAt[i]!);
        writer.bytes(LATEST_COMMA);
        writer.number(value[i]!);
        if (statusFields) writer.bytes(statusFields[status![i]!]!);
        writer.bytes(end);
      }
      return writer.take();
    },
    close: () => CLOSING,
    wholeOnlyWithClose: true,
  };
}

/**
 * The series as `text/csv` (RFC 4180, v1.1.md "CSV"): a header line, then one line per measurement,
 * each repeating the tube's unit and vertical datum. Times and numbers are written as in the JSON.
 *
 * Every line after the header starts with the CRLF that ends the line before it, and the last CRLF is
 * the close, which the lifecycle writes only once the snapshot ended well. So, as the JSON's `]}`, a
 * CSV ends in CRLF only when it is whole: a cut-off one (which the client also sees as a chunked body
 * without its last chunk) ends in the middle of a line.
 */
import type { MeasurementBatch } from './batch.js';
import { AsciiWriter } from './measurementText.js';
import type { SeriesRepresentation } from './representation.js';
import type { SeriesHead } from './schemas.js';

export const CSV_MEDIA_TYPE = 'text/csv; charset=utf-8; header=present';

const CRLF = '\r\n';
const CLOSING = Buffer.from(CRLF);

/** The last columns of every line: the same on each line of a response. */
const CONSTANT_COLUMNS = ['unit', 'verticalDatum'] as const;

/** A column of a batch: its name (the batch's field and the header's name), and how its text is written. */
type Column = readonly [name: string, kind: 'instant' | 'number'];

/** The columns of one kind of series: its header line, and the formatter of a batch. */
export interface CsvColumns {
  readonly header: string;
  /** The lines of `batch`, each after a CRLF and ending in `constant` (the unit and datum columns). */
  readonly lines: (batch: MeasurementBatch, constant: Buffer) => Buffer;
}

const COLUMN_NAME = /^[A-Za-z][A-Za-z0-9]*$/;
/** Bytes a field can take at most: an instant 27, a number 25, and the comma or CRLF before it. */
const FIELD_BYTES = 2 + 27;

const writer = new AsciiWriter();

/**
 * Compiles the formatter of `columns` once: a loop that writes each line's fields from the batch's
 * numbers, as the JSON writes them (measurementText.ts). Generated code, as fast-json-stringify's is,
 * so that no per-column loop or lookup runs per row.
 */
export function csvColumns(columns: readonly Column[]): CsvColumns {
  const fields = columns.map(([name, kind], i) => {
    if (!COLUMN_NAME.test(name)) throw new Error(`not a column name: ${name}`);
    return `writer.bytes(${i === 0 ? 'CRLF' : 'COMMA'}); writer.${kind}(batch.${name}[i]);`;
  });
  const lines = new Function(
    'writer',
    'CRLF',
    'COMMA',
    `return function csvLines(batch, constant) {
      writer.reserve(batch.length * (${FIELD_BYTES * columns.length} + constant.length));
      for (let i = 0; i < batch.length; i++) {
        ${fields.join('\n        ')}
        writer.bytes(constant);
      }
      return writer.take();
    }`,
  )(writer, Buffer.from(CRLF), Buffer.from(',')) as CsvColumns['lines'];
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
export const csvField = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/**
 * A CSV writer for one response: it keeps what the head says for its lines, the columns (raw or
 * aggregated) and the unit and datum, quoted once. A fresh one per response, unlike jsonSeries, for
 * that reason.
 */
export function csvSeries(): SeriesRepresentation {
  let columns = RAW_COLUMNS;
  let constant = Buffer.alloc(0);
  return {
    mediaType: CSV_MEDIA_TYPE,
    head(head) {
      columns = head.aggregate ? AGGREGATED_COLUMNS : RAW_COLUMNS;
      constant = Buffer.from(`,${csvField(head.unit)},${csvField(head.verticalDatum)}`);
      return Buffer.from(columns.header);
    },
    batch: (batch) => columns.lines(batch, constant),
    close: () => CLOSING,
  };
}

/** `2024-01-01T00:00:00.5Z` → `20240101T000000.5Z`: ISO 8601's basic form, fractions kept. */
const compactInstant = (instant: string) => instant.replace(/[-:]/g, '');

/**
 * The Content-Disposition of a series' file: `<tubeIdentifier>_<from>_<to>.<extension>` in compact UTC
 * form. Fractions of a second are kept, so that different intervals never share a name; every
 * character is one a file name may hold on any common system, and none needs escaping in the quoted
 * string.
 */
export const seriesAttachment = (
  { tubeIdentifier, from, to }: Pick<SeriesHead, 'tubeIdentifier' | 'from' | 'to'>,
  extension: 'csv' | 'arrows',
) => `attachment; filename="${tubeIdentifier}_${compactInstant(from)}_${compactInstant(to)}.${extension}"`;

/** The Content-Disposition of a series' CSV (v1.1.md, "CSV"). */
export const csvAttachment = (head: Pick<SeriesHead, 'tubeIdentifier' | 'from' | 'to'>) =>
  seriesAttachment(head, 'csv');

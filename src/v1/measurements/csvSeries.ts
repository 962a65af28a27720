/**
 * The series as `text/csv` (RFC 4180, v1.1.md "CSV"): a header line, then one line per measurement,
 * each repeating the tube's unit and vertical datum. Times and numbers are the JSON's text.
 *
 * Every line after the header starts with the CRLF that ends the line before it, and the last CRLF is
 * the close, which the lifecycle writes only once the snapshot ended well. So, as the JSON's `]}`, a
 * CSV ends in CRLF only when it is whole: a cut-off one (which the client also sees as a chunked body
 * without its last chunk) ends in the middle of a line.
 */
import { asNumber } from '../../http/jsonSchema.js';
import type { SeriesRepresentation } from './representation.js';
import type { SeriesHead } from './schemas.js';

export const CSV_MEDIA_TYPE = 'text/csv; charset=utf-8; header=present';

const CRLF = '\r\n';
const CLOSING = Buffer.from(CRLF);

/** The last columns of every line: the same on each line of a response. */
const CONSTANT_COLUMNS = ['unit', 'verticalDatum'] as const;

/** A column of a row: its name (the row's field and the header's name), and how its text is written. */
type Column = readonly [name: string, kind: 'text' | 'number'];

/** The columns of one kind of series: its header line, and the formatter of a batch of its rows. */
export interface CsvColumns {
  readonly header: string;
  /** The lines of `rows`, each after a CRLF and ending in `constant` (the unit and datum columns). */
  readonly lines: (rows: readonly object[], constant: string) => string;
}

const COLUMN_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

/**
 * Compiles the formatter of `columns` once: a loop that writes each line by concatenating the row's
 * fields, which are already text (the database's), with numbers passed through the JSON's asNumber.
 * Generated code, as fast-json-stringify's is, so that no per-column loop or lookup runs per row.
 */
export function csvColumns(columns: readonly Column[]): CsvColumns {
  const fields = columns.map(([name, kind]) => {
    if (!COLUMN_NAME.test(name)) throw new Error(`not a column name: ${name}`);
    return kind === 'number' ? `asNumber(row.${name})` : `row.${name}`;
  });
  const lines = new Function(
    'asNumber',
    `return function csvLines(rows, constant) {
      let text = '';
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        text += ${JSON.stringify(CRLF)} + ${fields.join(" + ',' + ")} + constant;
      }
      return text;
    }`,
  )(asNumber) as CsvColumns['lines'];
  return { header: [...columns.map(([name]) => name), ...CONSTANT_COLUMNS].join(','), lines };
}

/** The columns of a raw series. */
export const RAW_COLUMNS = csvColumns([
  ['observedAt', 'text'],
  ['value', 'number'],
]);

/** The columns of an aggregated series: bucket start, mean, and the bucket's min, max and count. */
export const AGGREGATED_COLUMNS = csvColumns([
  ['observedAt', 'text'],
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
  let constant = '';
  return {
    mediaType: CSV_MEDIA_TYPE,
    head(head) {
      columns = head.aggregate ? AGGREGATED_COLUMNS : RAW_COLUMNS;
      constant = `,${csvField(head.unit)},${csvField(head.verticalDatum)}`;
      return Buffer.from(columns.header);
    },
    batch: (rows) => Buffer.from(columns.lines(rows, constant)),
    close: () => CLOSING,
  };
}

/** `2024-01-01T00:00:00.5Z` → `20240101T000000.5Z`: ISO 8601's basic form, fractions kept. */
const compactInstant = (instant: string) => instant.replace(/[-:]/g, '');

/**
 * The Content-Disposition of a series' CSV: `<tubeIdentifier>_<from>_<to>.csv` in compact UTC form.
 * Fractions of a second are kept, so that different intervals never share a name; every character is
 * one a file name may hold on any common system, and none needs escaping in the quoted string.
 */
export const csvAttachment = ({
  tubeIdentifier,
  from,
  to,
}: Pick<SeriesHead, 'tubeIdentifier' | 'from' | 'to'>) =>
  `attachment; filename="${tubeIdentifier}_${compactInstant(from)}_${compactInstant(to)}.csv"`;

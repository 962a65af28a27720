/**
 * The seam between a document's lifecycle (src/engine/document.ts: snapshot, backpressure, abort,
 * cut-off) and the bytes of one format. A new format is one module that implements Format; the
 * lifecycle stays as it is.
 */
import type { MeasurementBatch } from '../batch.js';
import type { NetworkHead, SeriesHead } from '../schemas.js';

/** The formats, in the order that breaks a tie of an Accept header's q-values. */
export const FORMAT_NAMES = ['json', 'csv', 'arrow'] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** Writes one response: a fresh one per response, as a writer may keep what its head said. */
export interface SeriesWriter {
  /** Everything of a tube before its first measurement. */
  head(head: SeriesHead): Buffer;
  /** One batch of one tube's measurements, in order; `first` for the batch right after its head. */
  batch(rows: MeasurementBatch, first: boolean): Buffer;
  /** Written only once the snapshot ended well, so that a cut-off document is never mistaken for whole. */
  close(): Buffer;
  /**
   * Whether only the close makes a body whole (JSON's `]}`, CSV's last CRLF). Otherwise a body cut
   * between two chunks might read as whole, and the shared writer guards each chunk (write/document.ts).
   */
  readonly wholeOnlyWithClose?: true;
}

/** A writer of many tubes' series in one document, after a head of the whole document. */
export interface NetworkWriter extends SeriesWriter {
  /**
   * Everything before the first tube, written even when no tube follows; `tubes` are the heads of
   * every tube the document may write (for a format that lists them up front, as Arrow's dictionaries).
   */
  open(head: NetworkHead, tubes: readonly SeriesHead[]): Buffer;
}

/** What a writer writes besides the columns of its rows' shape; made with the writer, before the plan. */
export interface WriterOptions {
  /**
   * With the status of each measurement (`include=status`): the names of the status codes, STATUSES,
   * or DELTA_STATUSES for a delta, which may write `removed` (src/engine/schemas.ts). JSON and CSV
   * write a row's name; Arrow sends them all as the status column's dictionary, so a reader knows
   * every name the stream may hold before the first row. Without it, no status is written.
   */
  statuses?: readonly string[] | undefined;
}

export interface Format {
  readonly name: FormatName;
  /** The response's Content-Type. */
  readonly mediaType: string;
  /** The file name extension, for a format that comes as a file; undefined for JSON. */
  readonly extension: string | undefined;
  series(options?: WriterOptions): SeriesWriter;
  network(options?: WriterOptions): NetworkWriter;
}

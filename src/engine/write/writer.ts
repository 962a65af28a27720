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

/** Writes one document: a fresh one per response, as a writer may keep what its head said. */
export interface DocumentWriter {
  /**
   * One batch of one tube's measurements, in order; `first` for the batch right after its head. A
   * writer without heads (latest) takes each batch whole, rows of many tubes, `first` for the first.
   */
  batch(rows: MeasurementBatch, first: boolean): Buffer;
  /** Written only once the snapshot ended well, so that a cut-off document is never mistaken for whole. */
  close(): Buffer;
  /**
   * Whether only the close makes a body whole (JSON's `]}`, CSV's last CRLF). Otherwise a body cut
   * between two chunks might read as whole, and the shared writer guards each chunk (write/document.ts).
   */
  readonly wholeOnlyWithClose?: true;
  /**
   * For a writer whose chunks are large: a chunk of its batches that the consumer has sent, and that
   * nothing holds any more; its memory is reused for a later chunk (recycledChunks.ts).
   */
  recycle?(chunk: Buffer): void;
}

/** Writes one tube's series: its head, then its batches. */
export interface SeriesWriter extends DocumentWriter {
  /** Everything of a tube before its first measurement. */
  head(head: SeriesHead): Buffer;
}

/** A writer of many tubes' series in one document, after a head of the whole document. */
export interface NetworkWriter extends SeriesWriter {
  /**
   * Everything before the first tube, written even when no tube follows; `tubes` are the heads of
   * every tube the document may write (for a format that lists them up front, as Arrow's dictionaries).
   */
  open(head: NetworkHead, tubes: readonly SeriesHead[]): Buffer;
}

/** A tube of a latest document, as each row refers to it (its position in the document's list). */
export interface LatestTube {
  tubeIdentifier: string;
  unit: string;
  verticalDatum: string;
  wellName: string;
  tubeNumber: string;
  /** The well's location, WGS 84 longitude and latitude; undefined when unknown. */
  location: readonly [longitude: number, latitude: number] | undefined;
}

/**
 * Writes a latest document: the latest measurement of each of many tubes, one row per tube. It has no
 * tube heads: it takes each batch whole, each row's `tube` its tube's position in `open`'s list.
 */
export interface LatestWriter extends DocumentWriter {
  /** Everything before the first row, written even when no row follows. */
  open(tubes: readonly LatestTube[]): Buffer;
}

/**
 * What a writer makes of a latest document's tubes (their pieces of text, their dictionaries), made
 * once per list: the server keeps one list per view of a key, so every request of it reuses them.
 */
export function madeOncePerList<T>(
  made: WeakMap<readonly LatestTube[], T>,
  tubes: readonly LatestTube[],
  make: () => T,
): T {
  let kept = made.get(tubes);
  if (kept === undefined) {
    kept = make();
    made.set(tubes, kept);
  }
  return kept;
}

/** The formats of latest, in the order that breaks a tie: the measurements' formats, then GeoJSON. */
export const LATEST_FORMAT_NAMES = [...FORMAT_NAMES, 'geojson'] as const;
export type LatestFormatName = (typeof LATEST_FORMAT_NAMES)[number];

/** What a response needs of a format before its writer: its name, media type and file extension. */
export interface MediaFormat<N extends string = LatestFormatName> {
  readonly name: N;
  /** The response's Content-Type. */
  readonly mediaType: string;
  /** The file name extension, for a format that comes as a file; undefined for JSON and GeoJSON. */
  readonly extension: string | undefined;
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

/** A format of latest: JSON, CSV and Arrow (Format), and GeoJSON, which has no series. */
export interface LatestFormat extends MediaFormat {
  latest(options?: WriterOptions): LatestWriter;
}

export interface Format extends LatestFormat {
  readonly name: FormatName;
  series(options?: WriterOptions): SeriesWriter;
  network(options?: WriterOptions): NetworkWriter;
}

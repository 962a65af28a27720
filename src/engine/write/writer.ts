/**
 * How a series is written: the seam between the stream's lifecycle (seriesStream.ts: snapshot, cursor,
 * backpressure, abort, cut-off) and the bytes of one media type. A new format is one module that
 * implements this; the lifecycle stays as it is.
 */

import type { MeasurementBatch } from '../batch.js';
import type { SeriesHead } from '../schemas.js';

export interface SeriesRepresentation {
  /** The response's Content-Type. */
  readonly mediaType: string;
  /** Everything before the first measurement. */
  head(head: SeriesHead): Buffer;
  /** One batch of measurements, in order; `first` for the batch written right after the head. */
  batch(rows: MeasurementBatch, first: boolean): Buffer;
  /** Written only once the snapshot ended well, so that a cut-off response is never mistaken for whole. */
  close(): Buffer;
}

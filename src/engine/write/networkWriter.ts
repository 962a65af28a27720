/**
 * How a network response is written: a series representation (measurements/representation.ts), whose
 * head and batches the lifecycle writes for each tube, with a head of the whole response before them.
 */

import type { NetworkHead } from '../networkSchemas.js';
import type { SeriesHead } from '../schemas.js';
import type { SeriesRepresentation } from './writer.js';

export interface NetworkRepresentation extends SeriesRepresentation {
  /**
   * Everything before the first tube, written even when no tube follows; `tubes` are the heads of
   * every tube the response may write (a format that lists them up front, as Arrow's dictionaries).
   */
  open(head: NetworkHead, tubes: readonly SeriesHead[]): Buffer;
}

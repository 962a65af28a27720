/**
 * The series as an Apache Arrow IPC stream (v1.2.md, "Arrow IPC stream"): the schema with the series
 * head as its custom metadata, one record batch per batch of the source, and the end-of-stream marker
 * in the close, which the lifecycle writes only once the snapshot ended well: a cut-off stream lacks
 * it, and ends inside a message, on which a reader fails.
 */

import type { SeriesHead } from '../schemas.js';
import {
  AGGREGATED_ARROW_COLUMNS,
  ARROW_MEDIA_TYPE,
  type BatchColumn,
  batchFields,
  END_OF_STREAM,
  RAW_ARROW_COLUMNS,
  recordBatchMessage,
  schemaMessage,
} from './arrowMessages.js';
import type { SeriesRepresentation } from './writer.js';

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

/**
 * Bytes each chunk holds back from the end of its last message and sends at the start of the next
 * chunk (or in the close): a body cut off between two chunks then ends inside a message, which every
 * reader refuses. Cut at a message boundary instead, a stream without its end-of-stream marker reads
 * as whole in apache-arrow and polars alike.
 */
const HELD_BACK_BYTES = 8;

/**
 * An Arrow writer for one response: it keeps the columns the head chose (raw or aggregated), and the
 * bytes held back from the last message.
 */
export function arrowSeries(): SeriesRepresentation {
  let columns: readonly BatchColumn[] = RAW_ARROW_COLUMNS;
  let heldBack = Buffer.alloc(0);
  /** `message` after the bytes held back before it, less its own last bytes, which are held back now. */
  const sendHoldingBack = (message: Buffer) => {
    const sent = Buffer.concat([heldBack, message.subarray(0, message.length - HELD_BACK_BYTES)]);
    heldBack = Buffer.from(message.subarray(message.length - HELD_BACK_BYTES));
    return sent;
  };
  return {
    mediaType: ARROW_MEDIA_TYPE,
    head(head) {
      columns = head.aggregate ? AGGREGATED_ARROW_COLUMNS : RAW_ARROW_COLUMNS;
      return sendHoldingBack(schemaMessage(batchFields(columns), seriesMetadata(head)));
    },
    batch: (batch) => sendHoldingBack(recordBatchMessage(batch, columns)),
    close: () => Buffer.concat([heldBack, END_OF_STREAM]),
  };
}

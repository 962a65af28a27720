/**
 * The writing half of a document, shared by every format and endpoint: the chunks of a plan's tubes
 * and batches in a writer's format, and the guard that keeps a cut-off document from reading as whole.
 */
import { type MeasurementBatch, rowsBetween } from '../batch.js';
import type { SeriesHead } from '../schemas.js';
import type { DocumentWriter, LatestWriter, SeriesWriter } from './writer.js';

/** What the document writes, read from its plan. */
export interface DocumentLayout {
  /** Bytes before the first tube: the document's own head (none for one series). */
  opening?: Buffer;
  /**
   * Each tube's head, in the document's order: a row's `tube` is its position here. None for a latest
   * document, whose tubes are in its opening.
   */
  tubes: readonly SeriesHead[];
  /** Whether a tube without rows is written all the same, as an empty series (not in a delta). */
  everyTube: boolean;
}

/**
 * What a document's chunks buffer ahead of the socket: a few batches, so the next batch is fetched
 * while the previous one is being sent, and a slow client holds back the database, not memory.
 */
export const READ_AHEAD_BYTES = 512 * 1024;

/**
 * Bytes of each chunk held back and sent at the start of the next one, or with the close, for a format
 * whose stream may end after any message (Arrow): a body cut off between two chunks then ends inside a
 * message, which every reader refuses, where a cut at a message boundary would read as a whole, shorter
 * table in apache-arrow and polars alike. JSON and CSV are whole only with their close, and a cut
 * inside their last value could read as a different value: they hold nothing back.
 */
const HELD_BACK_BYTES = 8;

const NOTHING = Buffer.alloc(0);

/** The guard of one document: each chunk passes through it, and the close comes out of it last. */
export class CutOffGuard {
  private held = NOTHING;
  private readonly holdBack: number;

  constructor(writer: Pick<DocumentWriter, 'wholeOnlyWithClose'>) {
    this.holdBack = writer.wholeOnlyWithClose ? 0 : HELD_BACK_BYTES;
  }

  /** `chunk` after what was held back, less its own last bytes, which are held back now. */
  pass(chunk: Buffer): Buffer {
    if (this.holdBack === 0) return chunk;
    const bytes = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const sent = Math.max(0, bytes.length - this.holdBack);
    this.held = Buffer.from(bytes.subarray(sent));
    return bytes.subarray(0, sent);
  }

  /** What was held back, then the close: only for a document whose snapshot ended well. */
  close(close: Buffer): Buffer {
    return this.held.length === 0 ? close : Buffer.concat([this.held, close]);
  }
}

/**
 * The rows of one tube in a batch: from `start` on, while `tube` stays the same; its end. The rows
 * come ordered by tube, so when the last row is of the same tube, so are all: no scan of each row.
 */
function tubeEnd(batch: MeasurementBatch, start: number): number {
  const tube = batch.tube[start];
  if (batch.tube[batch.length - 1] === tube) return batch.length;
  let end = start + 1;
  while (end < batch.length && batch.tube[end] === tube) end++;
  return end;
}

/** A writer without tube heads takes each batch whole (latest: one row per tube, many tubes a batch). */
const takesWholeBatches = (writer: SeriesWriter | LatestWriter): writer is LatestWriter =>
  !('head' in writer);

/**
 * The document without its close (added once the snapshot ended well): its opening, then for each
 * tube its head and its measurements, batch by batch (a latest document: each batch whole). A batch is one chunk (one large socket write),
 * with the heads of the tubes it starts; the heads of tubes left without rows at the end come in
 * chunks of at most READ_AHEAD_BYTES, so no number of tubes is held at once. Apart from the database,
 * so that a benchmark can drive it with batches of its own.
 */
export async function* documentChunks(
  layout: DocumentLayout,
  batches: AsyncIterable<MeasurementBatch>,
  writer: SeriesWriter | LatestWriter,
  guard: CutOffGuard,
  onRows?: (count: number) => void,
): AsyncGenerator<Buffer> {
  const { tubes, everyTube } = layout;
  // An empty opening is none: the first chunk is then the writer's own, not a copy.
  let parts: Buffer[] = layout.opening?.length ? [layout.opening] : [];
  /** Whether a chunk was yielded. */
  let started = false;
  let bytes = 0;
  const write = (part: Buffer) => {
    parts.push(part);
    bytes += part.length;
  };
  const take = () => {
    const chunk = guard.pass(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    parts = [];
    bytes = 0;
    started = true;
    return chunk;
  };
  /** The writer of tube heads; undefined for one that takes each batch whole. */
  const heads = takesWholeBatches(writer) ? undefined : writer;
  /** The tube whose measurements are being written: -1 before the first. */
  let current = -1;
  const begin = (heads: SeriesWriter, tube: number) => {
    if (everyTube)
      for (let skipped = current + 1; skipped < tube; skipped++) write(heads.head(tubes[skipped]!));
    write(heads.head(tubes[tube]!));
    current = tube;
  };
  for await (const batch of batches) {
    if (!heads) {
      write(writer.batch(batch, !started));
      yield take();
      onRows?.(batch.length);
      continue;
    }
    for (let start = 0; start < batch.length; ) {
      const end = tubeEnd(batch, start);
      const first = batch.tube[start] !== current;
      if (first) begin(heads, batch.tube[start]!);
      write(writer.batch(rowsBetween(batch, start, end), first));
      start = end;
    }
    yield take();
    onRows?.(batch.length);
  }
  if (heads && everyTube) {
    while (current < tubes.length - 1) {
      begin(heads, current + 1);
      if (bytes >= READ_AHEAD_BYTES) yield take();
    }
  }
  // Whatever is left, and once at least: a document whose plan was read is there, even when empty.
  if (parts.length > 0 || !started) yield take();
}

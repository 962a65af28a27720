/**
 * A document: one response body of one tube's series or many, read in one read-only snapshot. Its
 * plan is read first and handed back; then its measurements follow batch by batch from the binary
 * COPY of the plan's select (read/), each batch one chunk in the writer's format (write/). Backpressure
 * holds back the database, a consumer that stops ends the read, and an error after the first chunk
 * cuts the document off: written once here, for every format and endpoint.
 */
import { Readable } from 'node:stream';
import type { Queryable, Sql } from '../db/connect.js';
import { begin, iterate } from '../db/transaction.js';
import type { BatchShape } from './batch.js';
import { type ChunkList, ChunksChanged, chunkList, lockChunks } from './chunkLocks.js';
import { readBatches } from './read/binaryCopy.js';
import { type Interval, measurementsSelect, type StatusRequest, shapeOf } from './read/selects.js';
import { seriesHead, type TubeRow } from './read/tubes.js';
import { CutOffGuard, type DocumentLayout, documentChunks, READ_AHEAD_BYTES } from './write/document.js';
import type { LatestWriter, SeriesWriter } from './write/writer.js';

/**
 * Rows per batch, and so per chunk of the response. A batch's JSON stays under V8's large-object size,
 * and its text is young garbage that dies before the next collection (docs/performance.md).
 */
export const BATCH_SIZE = 2000;

/**
 * What is read before a document is handed back: the whole of one smaller than this, snapshot
 * committed. Its connection lost meanwhile (a replica stopped, a restart) is then an error before the
 * response began, which a read tries again elsewhere, instead of a cut-off response. A larger document
 * starts at once, as its first chunk alone is about this size.
 */
export const READ_BEFORE_SENDING_BYTES = 64 * 1024;

/** Starts of a document whose chunks changed since its pool listed them, each with a new list. */
const CHUNK_LIST_ATTEMPTS = 3;

/** What a document holds, read in its snapshot before any measurement. */
export interface DocumentPlan extends DocumentLayout {
  /** The rows: the columns of read/selects.ts, ordered by tube then time. */
  select: string;
  shape: BatchShape;
}

/** What an endpoint reads first, in the document's snapshot: the document's plan and its own facts. */
export interface Planned {
  document: DocumentPlan;
}

/**
 * Reads an endpoint's plan on `tx`, a transaction of `pool`'s; undefined when there is nothing to
 * write (a tube the key may not read). A refusal it throws is an ordinary error: nothing was sent.
 */
export type Planner<P extends Planned> = (pool: Sql, tx: Queryable) => Promise<P | undefined>;

export interface DocumentRequest<P extends Planned> {
  plan: Planner<P>;
  /**
   * The interval of measurements its select reads: their chunks are locked before its snapshot
   * (chunkLocks.ts). None for a document that reads no measurements.
   */
  interval?: { from: string; to: string };
  /** Told how many measurements each chunk holds. */
  onRows?: (count: number) => void;
  /**
   * Told when the document's pooled connection is taken, and when it is back in the pool, after any
   * way out (nothing to write, a failure, the end, a consumer that stopped).
   */
  connection?: { held(): void; released(): void };
  /** Awaited before each chunk: a bulk document's turn. */
  beforeChunk?: () => Promise<void>;
}

export interface OpenedDocument<P extends Planned> {
  plan: P;
  body: Readable;
}

/** The document of one tube's series, read on `tx` (of `pool`). */
export const seriesDocument = async (
  pool: Sql,
  tx: Queryable,
  tube: TubeRow,
  tubeIdentifier: string,
  interval: Interval & StatusRequest,
): Promise<DocumentPlan> => ({
  tubes: [seriesHead(tube, tubeIdentifier, interval)],
  everyTube: true,
  select: await measurementsSelect(pool, tx, tube.id, interval),
  shape: shapeOf(interval.aggregate, interval.withStatus),
});

/** The plan alone, in a snapshot of its own: what a HEAD or a conditional request needs. */
export const readPlan = <P extends Planned>(sql: Sql, plan: Planner<P>): Promise<P | undefined> =>
  begin(sql, (tx) => plan(sql, tx), { snapshot: true });

/** The plan, then the document's chunks without its close, in the snapshot of `tx`. */
async function* planThenChunks<P extends Planned>(
  pool: Sql,
  tx: Queryable,
  request: DocumentRequest<P>,
  writer: SeriesWriter | LatestWriter,
  guard: CutOffGuard,
  chunks: ChunkList | undefined,
): AsyncGenerator<{ plan: P } | Buffer> {
  // This runs inside the transaction: the connection is ours until the transaction is over.
  request.connection?.held();
  // Sent first (a lock takes no snapshot), then the plan, pipelined.
  const locked = chunks && request.interval && lockChunks(tx, chunks, request.interval);
  const [, plan] = await Promise.all([locked, request.plan(pool, tx)]);
  if (!plan) return;
  yield { plan };
  const { select, shape } = plan.document;
  yield* documentChunks(
    plan.document,
    readBatches(tx, select, shape, BATCH_SIZE),
    writer,
    guard,
    request.onRows,
  );
}

/**
 * The document, or undefined when its plan found nothing to write. The plan and the first
 * READ_BEFORE_SENDING_BYTES (a small document whole) are read before this resolves, so an error up to
 * there is an ordinary error (a problem response, or a read tried again elsewhere); a later one
 * destroys the body, and the response is cut off.
 */
export async function openDocument<P extends Planned>(
  sql: Sql,
  request: DocumentRequest<P>,
  writer: SeriesWriter | LatestWriter,
): Promise<OpenedDocument<P> | undefined> {
  const guard = new CutOffGuard(writer);
  // Called once the iteration has returned, which it does with the connection back in the pool.
  const released = () => request.connection?.released();
  let items: AsyncGenerator<{ plan: P } | Buffer, void, undefined>;
  let plan: P | undefined;
  const head: Buffer[] = [];
  let headBytes = 0;
  let whole = false;
  try {
    let chunks = request.interval && (await chunkList(sql));
    for (let attempt = 1; ; attempt++) {
      // One read-only snapshot for the whole document: its plan, its tubes and all their rows agree.
      const listed = chunks;
      items = iterate(sql, (tx) => planThenChunks(sql, tx, request, writer, guard, listed), {
        snapshot: true,
      });
      try {
        const first = await items.next();
        if (!first.done) plan = (first.value as { plan: P }).plan;
        else whole = true;
        break;
      } catch (error) {
        if (!(error instanceof ChunksChanged) || attempt === CHUNK_LIST_ATTEMPTS) throw error;
        chunks = await chunkList(sql, chunks);
      }
    }
    while (plan && headBytes < READ_BEFORE_SENDING_BYTES) {
      await request.beforeChunk?.();
      const next = await items.next();
      if (next.done) {
        whole = true;
        break;
      }
      const chunk = next.value as Buffer;
      head.push(chunk);
      headBytes += chunk.length;
    }
  } catch (error) {
    released();
    throw error;
  }
  if (!plan) {
    released();
    return undefined;
  }
  // Ends the transaction if it still runs (a no-op once the read is over): a body stopped in its head,
  // or destroyed before it was read at all, never reaches `yield*`, which would otherwise pass the stop
  // on, and the transaction would hold its connection for good.
  let finished: Promise<void> | undefined;
  const finish = () => (finished ??= items.return().then(released, released));
  const rest = items as AsyncGenerator<Buffer>;
  async function* body() {
    try {
      for (const chunk of head.splice(0)) if (chunk.length > 0) yield chunk;
      while (!whole) {
        await request.beforeChunk?.();
        const next = await rest.next();
        if (next.done) break;
        if (next.value.length > 0) yield next.value;
      }
    } finally {
      await finish();
    }
    // Only now, with the output read to its trailer and the transaction committed, is the document
    // complete. A connection lost after the output's end fails the commit instead, and the client gets
    // a cut-off response rather than a short well-formed one.
    yield guard.close(writer.close());
  }
  const stream = Readable.from(body(), { objectMode: false, highWaterMark: READ_AHEAD_BYTES });
  stream.once('close', () => void finish());
  return { plan, body: stream };
}

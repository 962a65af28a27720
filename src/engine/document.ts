/**
 * A series as a stream of chunks: the head first, then the measurements batch by batch from the
 * binary COPY of the series' select (sql.ts, measurementBatches), all in one read-only snapshot, each batch one chunk (one large socket write) in
 * the representation asked for. Backpressure holds back the database, a client that leaves stops the read, and
 * an error after the first byte cuts the response off: written once here, for every representation.
 */
import { Readable } from 'node:stream';
import type { Queryable, Sql } from '../db/connect.js';
import { iterate } from '../db/transaction.js';
import { type Client, mayRead } from '../keys/clients.js';
import { AGGREGATE_SECONDS, type Aggregate } from '../v1/series/query.js';
import { type BatchShape, type MeasurementBatch, rowsBetween } from './batch.js';
import {
  aggregateSelect,
  type Bucketing,
  bucketFunctionOf,
  findTube,
  measurementBatches,
  seriesSelect,
  shapeOf,
  type TubeColumns,
  type TubeRow,
} from './read/selects.js';
import type { SeriesHead } from './schemas.js';
import type { SeriesRepresentation } from './write/writer.js';

/**
 * Rows per batch, and so per chunk of the response. A batch's JSON stays under V8's large-object size,
 * and its text is young garbage that dies before the next collection (bench/README.md).
 */
export const BATCH_SIZE = 2000;

/**
 * What the response stream buffers ahead of the socket: a few batches, so the next batch is fetched
 * while the previous one is being sent, and a slow client holds back the database, not memory.
 */
const READ_AHEAD_BYTES = 512 * 1024;

/**
 * What is read before the first byte is sent: the whole of a document smaller than this, snapshot
 * committed. Its connection lost meanwhile (a replica stopped, a restart) is then an error before the
 * response began, which a read tries again elsewhere, instead of a cut-off response. A larger document
 * starts at once, as its first chunk alone is about this size.
 */
export const READ_BEFORE_SENDING_BYTES = 64 * 1024;

export interface SeriesRequest {
  client: Client;
  /** Canonical (lower-case) tube identifier. */
  tubeIdentifier: string;
  /** RFC 3339 UTC `Z` forms of the requested interval. */
  from: string;
  to: string;
  /** The bucket length asked for; undefined for every measurement. */
  aggregate?: Aggregate | undefined;
  /** Told the tube as read in the stream's snapshot, before any measurement is read (its validators). */
  onTube?: (tube: TubeRow) => void;
  /** Told how many measurements each chunk holds (for the request log). */
  onRows?: (count: number) => void;
  /**
   * Told when the stream's pooled connection is taken, and when it is back in the pool, after any way
   * out (no tube, a failure, the end, a client that left).
   */
  connection?: { held(): void; released(): void };
}

/** What a document holds, read in its snapshot before any measurement. */
export interface DocumentPlan {
  /** Bytes before the first tube: the document's own head (none for one series). */
  opening?: Buffer;
  /** Each tube's head, in the document's order: a row's `tube` is its position here. */
  tubes: readonly SeriesHead[];
  /** Whether a tube without rows is written all the same, as an empty series (not in a delta). */
  everyTube: boolean;
  /** The rows: the row source's columns, ordered by tube then time (sql.ts). */
  select: string;
  shape: BatchShape;
}

export interface DocumentRequest extends Pick<SeriesRequest, 'onRows' | 'connection'> {
  /**
   * What the document holds, read in its snapshot on `tx` (`pool` is the pool it came from); undefined
   * when there is nothing to write (the series of a tube the key may not read). A refusal it throws is
   * an ordinary error: nothing has been sent yet.
   */
  plan(pool: Sql, tx: Queryable): Promise<DocumentPlan | undefined>;
}

/** The head of a tube's series, as every representation writes it. */
export const seriesHead = (
  tube: Pick<TubeRow, 'unit' | 'verticalDatum'>,
  {
    tubeIdentifier,
    from,
    to,
    aggregate,
  }: Pick<SeriesRequest, 'tubeIdentifier' | 'from' | 'to' | 'aggregate'>,
): SeriesHead => ({
  tubeIdentifier,
  from,
  to,
  ...(aggregate && { aggregate }),
  unit: tube.unit,
  verticalDatum: tube.verticalDatum,
});

/** How `aggregate` cuts a series on the database behind `pool`; undefined for every measurement. */
export async function bucketingOf(
  pool: Sql,
  tx: Queryable,
  aggregate: Aggregate | undefined,
): Promise<Bucketing | undefined> {
  return (
    aggregate && { bucketFunction: await bucketFunctionOf(pool, tx), seconds: AGGREGATE_SECONDS[aggregate] }
  );
}

/** The select of one tube's series, or of its buckets. */
export async function measurementsSelect(
  pool: Sql,
  tx: Queryable,
  tube: number | TubeColumns,
  { from, to, aggregate }: Pick<SeriesRequest, 'from' | 'to' | 'aggregate'>,
): Promise<string> {
  const bucketing = await bucketingOf(pool, tx, aggregate);
  return bucketing ? aggregateSelect(tube, from, to, bucketing) : seriesSelect(tube, from, to);
}

/** One series: the document of one tube, or nothing for a tube the key may not read. */
async function seriesPlan(
  pool: Sql,
  tx: Queryable,
  request: SeriesRequest,
): Promise<DocumentPlan | undefined> {
  const tube = await findTube(tx, request.tubeIdentifier);
  // Unknown and hidden tubes end the same way: no output at all.
  if (!tube || !mayRead(request.client, tube.id)) return undefined;
  request.onTube?.(tube);
  return {
    tubes: [seriesHead(tube, request)],
    everyTube: true,
    select: await measurementsSelect(pool, tx, tube.id, request),
    shape: shapeOf(request.aggregate),
  };
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

/**
 * The document without its close (added once the snapshot ended well): its opening, then for each
 * tube its head and its measurements, batch by batch. A batch is one chunk (one large socket write),
 * with the heads of the tubes it starts; the heads of tubes left without rows at the end come in
 * chunks of at most READ_AHEAD_BYTES, so no number of tubes is held at once. Apart from the database
 * (documentChunks), so that a benchmark can drive it with batches of its own (bench/bulkWriters.ts).
 */
export async function* planChunks(
  plan: Pick<DocumentPlan, 'opening' | 'tubes' | 'everyTube'>,
  batches: AsyncIterable<MeasurementBatch>,
  representation: SeriesRepresentation,
  onRows?: (count: number) => void,
): AsyncGenerator<Buffer> {
  const { tubes, everyTube } = plan;
  let parts: Buffer[] = plan.opening ? [plan.opening] : [];
  /** Whether a chunk was yielded. */
  let started = false;
  let bytes = 0;
  const write = (part: Buffer) => {
    parts.push(part);
    bytes += part.length;
  };
  const take = () => {
    const chunk = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    parts = [];
    bytes = 0;
    started = true;
    return chunk;
  };
  /** The tube whose measurements are being written: -1 before the first. */
  let current = -1;
  const begin = (tube: number) => {
    if (everyTube)
      for (let skipped = current + 1; skipped < tube; skipped++) write(representation.head(tubes[skipped]!));
    write(representation.head(tubes[tube]!));
    current = tube;
  };
  for await (const batch of batches) {
    for (let start = 0; start < batch.length; ) {
      const end = tubeEnd(batch, start);
      const first = batch.tube[start] !== current;
      if (first) begin(batch.tube[start]!);
      write(representation.batch(rowsBetween(batch, start, end), first));
      start = end;
    }
    yield take();
    onRows?.(batch.length);
  }
  if (everyTube) {
    while (current < tubes.length - 1) {
      begin(current + 1);
      if (bytes >= READ_AHEAD_BYTES) yield take();
    }
  }
  // Whatever is left, and once at least: a document whose plan was read is there, even when empty.
  if (parts.length > 0 || !started) yield take();
}

/** The document without its close, read in the snapshot of `tx`: its plan, then planChunks. */
async function* documentChunks(
  pool: Sql,
  tx: Queryable,
  request: DocumentRequest,
  representation: SeriesRepresentation,
): AsyncGenerator<Buffer> {
  // This runs inside the transaction: the connection is ours until the transaction is over.
  request.connection?.held();
  const plan = await request.plan(pool, tx);
  if (!plan) return;
  yield* planChunks(
    plan,
    measurementBatches(tx, plan.select, plan.shape, BATCH_SIZE),
    representation,
    request.onRows,
  );
}

/** The document of one series: what its plan reads in the snapshot (seriesPlan). */
export const seriesDocument = (request: SeriesRequest): Pick<DocumentRequest, 'plan'> => ({
  plan: (pool, tx) => seriesPlan(pool, tx, request),
});

/**
 * The series as a readable stream, or undefined when the tube does not exist or the client may not
 * read it: the document of one tube (openDocumentStream).
 */
export const openSeriesStream = (sql: Sql, request: SeriesRequest, representation: SeriesRepresentation) =>
  openDocumentStream(
    sql,
    { ...seriesDocument(request), onRows: request.onRows, connection: request.connection },
    representation,
  );

/**
 * The document as a readable stream, or undefined when its plan found nothing to write. The plan and
 * the first READ_BEFORE_SENDING_BYTES (a small document whole) are read before this resolves, so an
 * error up to there is an ordinary error (a problem response, or a read tried again elsewhere); a
 * later one destroys the stream, and the response is cut off.
 */
export async function openDocumentStream(
  sql: Sql,
  request: DocumentRequest,
  representation: SeriesRepresentation,
): Promise<Readable | undefined> {
  const chunks = iterate(sql, (tx) => documentChunks(sql, tx, request, representation), { snapshot: true });
  // Called once the iteration has returned, which it does with the connection back in the pool.
  const released = () => request.connection?.released();
  const head: Buffer[] = [];
  let headBytes = 0;
  let whole = false;
  try {
    while (headBytes < READ_BEFORE_SENDING_BYTES) {
      const next = await chunks.next();
      if (next.done) {
        whole = true;
        break;
      }
      head.push(next.value);
      headBytes += next.value.length;
    }
  } catch (error) {
    released();
    throw error;
  }
  if (head.length === 0) {
    released();
    return undefined;
  }
  // Ends the transaction if it still runs (a no-op once the read is over): a stream stopped
  // in its head, or destroyed before it was read at all, never reaches `yield*`, which would
  // otherwise pass the stop on, and the transaction would hold its connection for good.
  let finished: Promise<void> | undefined;
  const finish = () => (finished ??= chunks.return().then(released, released));
  async function* document() {
    try {
      yield* head.splice(0);
      if (!whole) yield* chunks;
    } finally {
      await finish();
    }
    // Only now, with the output read to its trailer and the transaction committed, is the document
    // complete. A connection lost after the output's end fails the commit instead, and the client gets
    // a cut-off response rather than a short well-formed one.
    yield representation.close();
  }
  const stream = Readable.from(document(), { objectMode: false, highWaterMark: READ_AHEAD_BYTES });
  stream.once('close', () => void finish());
  return stream;
}

/**
 * A series as a stream of chunks: the head first, then the measurements batch by batch from the
 * binary COPY of the series' select (sql.ts, measurementBatches), all in one read-only snapshot, each batch one chunk (one large socket write) in
 * the representation asked for. Backpressure holds back the database, a client that leaves stops the read, and
 * an error after the first byte cuts the response off: written once here, for every representation.
 */
import { Readable } from 'node:stream';
import type { Queryable, Sql } from '../../db/connect.js';
import { iterateInTransaction } from '../../db/transactionIterator.js';
import { type Client, mayRead } from '../../keys/clients.js';
import { AGGREGATE_SECONDS, type Aggregate } from './query.js';
import type { SeriesRepresentation } from './representation.js';
import {
  aggregateSelect,
  bucketFunctionOf,
  findTube,
  measurementBatches,
  seriesSelect,
  shapeOf,
  type TubeRow,
} from './sql.js';

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

/** Head and measurements, without the close: that is added once the snapshot ended well. */
async function* seriesChunks(
  pool: Sql,
  tx: Queryable,
  request: SeriesRequest,
  representation: SeriesRepresentation,
): AsyncGenerator<Buffer> {
  // This runs inside the transaction: the connection is ours until the transaction is over.
  request.connection?.held();
  const tube = await findTube(tx, request.tubeIdentifier);
  // Unknown and hidden tubes end the same way: no output at all.
  if (!tube || !mayRead(request.client, tube.id)) return;
  request.onTube?.(tube);
  // Sent with the first batch, in one write.
  const { from, to, aggregate } = request;
  let head: Buffer | undefined = representation.head({
    tubeIdentifier: request.tubeIdentifier,
    from,
    to,
    ...(aggregate && { aggregate }),
    unit: tube.unit,
    verticalDatum: tube.verticalDatum,
  });
  const select = aggregate
    ? aggregateSelect(tube.id, from, to, {
        bucketFunction: await bucketFunctionOf(pool, tx),
        seconds: AGGREGATE_SECONDS[aggregate],
      })
    : seriesSelect(tube.id, from, to);
  for await (const rows of measurementBatches(tx, select, shapeOf(aggregate), BATCH_SIZE)) {
    const batch = representation.batch(rows, head !== undefined);
    const count = rows.length;
    if (head) {
      yield Buffer.concat([head, batch]);
      head = undefined;
    } else {
      yield batch;
    }
    request.onRows?.(count);
  }
  // The head alone, for an interval without measurements.
  if (head) yield head;
}

/**
 * The series as a readable stream, or undefined when the tube does not exist or the client may not
 * read it. The head and the first batch are read before this resolves, so an error up to there is an
 * ordinary error (a 500 problem); a later one destroys the stream, and the response is cut off.
 */
export async function openSeriesStream(
  sql: Sql,
  request: SeriesRequest,
  representation: SeriesRepresentation,
): Promise<Readable | undefined> {
  const chunks = iterateInTransaction(sql, 'isolation level repeatable read read only', (tx) =>
    seriesChunks(sql, tx, request, representation),
  );
  // Called once iterateInTransaction has returned, which it does with the connection back in the pool.
  const released = () => request.connection?.released();
  let first: IteratorResult<Buffer, void>;
  try {
    first = await chunks.next();
  } catch (error) {
    released();
    throw error;
  }
  if (first.done) {
    released();
    return undefined;
  }
  // Ends the transaction if it still runs (a no-op once the read is over): a stream stopped
  // at the first chunk, or destroyed before it was read at all, never reaches `yield*`, which would
  // otherwise pass the stop on, and the transaction would hold its connection for good.
  let finished: Promise<void> | undefined;
  const finish = () => (finished ??= chunks.return().then(released, released));
  async function* document() {
    try {
      yield first.value;
      yield* chunks;
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

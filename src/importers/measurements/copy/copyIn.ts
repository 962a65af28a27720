/**
 * A binary `COPY … FROM STDIN` on a transaction that opens at its first write and can be ended and
 * opened again: a connection in COPY cannot answer queries, so the direct path ends the COPY to look up
 * new tubes, then goes on with a new one. Writes wait while the server is behind.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { TransactionSql } from 'postgres';
import { COPY_HEADER, COPY_TRAILER } from './copyBinary.js';

/** The COPY failed after its last row was sent, and postgres.js did not pass on why. */
export class CopyFailedUnexplained extends Error {
  override name = 'CopyFailedUnexplained';
}

export class CopyIn {
  private stream: Writable | undefined;
  /** Settles when the open COPY has been completed by the server, or has failed. */
  private completed: Promise<void> = Promise.resolve();

  constructor(
    private readonly tx: TransactionSql,
    private readonly open: (tx: TransactionSql) => Promise<Writable>,
  ) {}

  async write(buffers: readonly Buffer[]): Promise<void> {
    for (const buffer of buffers) {
      const stream = this.stream ?? (await this.start());
      // A server error (say a key another import has just committed) destroys the stream: `completed`
      // then rejects with it, while 'drain' would never come.
      if (!stream.write(buffer)) await Promise.race([once(stream, 'drain'), this.completed]);
    }
  }

  /** Ends the open COPY, if any, once the server has taken every row; throws if it has not. */
  async end(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    this.stream = undefined;
    const copyDone = finalRun(stream);
    stream.end(COPY_TRAILER);
    await Promise.race([copyDone, this.completed]);
    await Promise.all([this.completed, this.queryAfterCopy()]);
  }

  /** Abandons the open COPY (the server discards it and fails the transaction). */
  abort(error: Error): void {
    this.stream?.destroy(error);
    this.stream = undefined;
  }

  private async start(): Promise<Writable> {
    const stream = await this.open(this.tx);
    this.completed = finished(stream);
    // Failures are awaited where they matter (write, end); this only keeps one from going unhandled.
    this.completed.catch(() => {});
    stream.write(COPY_HEADER);
    this.stream = stream;
    return stream;
  }

  /**
   * postgres.js loses a server error that arrives after the end of a COPY, and its stream then never
   * finishes (porsager/postgres#1173): a COPY that fails on one of its last rows would hang. A query
   * sent after the COPY fails in that case (the transaction is aborted), which ends the wait.
   */
  private async queryAfterCopy(): Promise<void> {
    try {
      await this.tx`select`;
    } catch (error) {
      throw (error as { code?: string }).code === '25P02' ? new CopyFailedUnexplained('COPY failed') : error;
    }
  }
}

/**
 * Resolves once the stream's `_final` has run, after the last buffered row: postgres.js sends the end of
 * the COPY there, and refuses queries on the connection until then.
 */
function finalRun(stream: Writable): Promise<void> {
  const final = stream._final;
  return new Promise((resolve) => {
    stream._final = (callback) => {
      final.call(stream, callback);
      resolve();
    };
  });
}

/**
 * A binary `COPY … FROM STDIN` that opens at its first write and can be ended and opened again. A
 * connection in COPY cannot answer queries, so the direct path ends the COPY to look up new tubes on
 * the same transaction, then goes on with a new one. Writes wait while the server is behind.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { COPY_HEADER, COPY_TRAILER } from './copyBinary.js';

export class CopyIn {
  private stream: Writable | undefined;
  /** Settles when the open COPY has been completed by the server, or has failed. */
  private completed: Promise<void> = Promise.resolve();

  constructor(private readonly open: () => Promise<Writable>) {}

  async write(buffers: readonly Buffer[]): Promise<void> {
    for (const buffer of buffers) {
      const stream = this.stream ?? (await this.start());
      // A server error (say a key another import has just committed) destroys the stream: `completed`
      // then rejects with it, while 'drain' would never come.
      if (!stream.write(buffer)) await Promise.race([once(stream, 'drain'), this.completed]);
    }
  }

  /** Ends the open COPY, if any, once the server has taken every row. */
  async end(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    this.stream = undefined;
    stream.end(COPY_TRAILER);
    await this.completed;
  }

  /** Abandons the open COPY (the server discards it and fails the transaction). */
  abort(error: Error): void {
    this.stream?.destroy(error);
    this.stream = undefined;
  }

  private async start(): Promise<Writable> {
    const stream = await this.open();
    this.completed = finished(stream);
    // Failures are awaited where they matter (write, end); this only keeps one from going unhandled.
    this.completed.catch(() => {});
    stream.write(COPY_HEADER);
    this.stream = stream;
    return stream;
  }
}

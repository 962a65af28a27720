/**
 * The measurements import reads its input up to twice: first on its direct path and, should that path
 * give way, again from the start on the staging path (measurements.ts). A regular file is simply read
 * again. A stream (standard input, a pipe) is kept in memory as it is read, up to a limit at which the
 * direct path gives way: its second reading is the kept chunks followed by the rest of the stream.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** Large reads: fewer chunks means fewer parser calls and fewer partial lines to stitch. */
export const CHUNK_BYTES = 1 << 20;
/** A year of one tube's 1-minute data is 34 MB: streams that size still take the direct path. */
const KEPT_BYTES = 64 << 20;

export interface ImportInput {
  /** The input's chunks from its start. */
  read(): AsyncIterable<Buffer>;
  /** True when a first reading that went on could not be repeated: it must stop (and give way) now. */
  readonly full: boolean;
  /** Releases the file or stream; the import calls it when it is done. */
  close(): Promise<void>;
}

/** A regular file, read from the start each time through the same handle (a renamed path cannot interfere). */
export function fileInput(handle: FileHandle): ImportInput {
  return { read: () => readFile(handle), full: false, close: () => handle.close() };
}

/** Plain positioned reads: a FileHandle's read stream, destroyed when a reading stops early, would close the handle. */
async function* readFile(handle: FileHandle): AsyncGenerator<Buffer> {
  for (let position = 0; ; ) {
    const { buffer, bytesRead } = await handle.read(
      Buffer.allocUnsafe(CHUNK_BYTES),
      0,
      CHUNK_BYTES,
      position,
    );
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

export function streamInput(stream: Readable, keptBytes = KEPT_BYTES): ImportInput {
  return new KeptStream(stream, keptBytes);
}

class KeptStream implements ImportInput {
  full = false;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private readings = 0;
  /** Shared by both readings; never returned early, which would destroy the stream. */
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(
    private readonly stream: Readable,
    private readonly limit: number,
  ) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  read(): AsyncIterable<Buffer> {
    this.readings++;
    if (this.readings === 1) return this.keeping();
    if (this.readings === 2) return this.again();
    throw new Error('a stream is read twice at most');
  }

  async close(): Promise<void> {
    this.kept = [];
    this.stream.destroy();
  }

  private async *keeping(): AsyncGenerator<Buffer> {
    for (;;) {
      if (this.full) throw new Error('a stream read past its kept limit could not be read again');
      const next = await this.chunks.next();
      if (next.done) return;
      this.kept.push(next.value);
      this.keptBytes += next.value.length;
      this.full = this.keptBytes >= this.limit;
      yield next.value;
    }
  }

  private async *again(): AsyncGenerator<Buffer> {
    // Each kept chunk is let go once read again.
    for (let chunk = this.kept.shift(); chunk !== undefined; chunk = this.kept.shift()) yield chunk;
    for (let next = await this.chunks.next(); !next.done; next = await this.chunks.next()) yield next.value;
  }
}

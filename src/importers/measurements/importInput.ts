/**
 * The measurements import reads its input more than once: first on its direct path and, should that
 * path give way, again from the start on the staging path; and the whole import again should its
 * transaction lose a deadlock (measurements.ts). A regular file is simply read again. A stream (standard
 * input, a pipe) is kept in memory as it is read, up to a limit at which the direct path gives way: a
 * later reading is the kept chunks followed by the rest of the stream, and one that goes on past the
 * limit lets the kept chunks go, after which the stream cannot be read again.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** Large reads: fewer chunks means fewer parser calls and fewer partial lines to stitch. */
export const CHUNK_BYTES = 1 << 20;
/** A year of one tube's 1-minute data is 34 MB: streams that size still take the direct path. */
const KEPT_BYTES = 64 << 20;

export interface ImportInput {
  /**
   * The input's chunks from its start. A stream's reading stops where the stream outgrows what is kept
   * (`full`), unless `onward`: it then goes on, and the stream cannot be read again.
   */
  read(onward?: boolean): AsyncIterable<Buffer>;
  /** True when a stream outgrew what is kept: a reading that is not `onward` must stop (and give way) now. */
  readonly full: boolean;
  /** False once a reading went on past what is kept: the input cannot be read from its start again (absent: always can). */
  readonly rereadable?: boolean;
  /** Releases the file or stream; the import calls it when it is done. */
  close(): Promise<void>;
  /** Bytes of a regular file; unknown for a stream. */
  readonly size?: number;
}

/** A regular file, read from the start each time through the same handle (a renamed path cannot interfere). */
export function fileInput(handle: FileHandle, size: number): ImportInput {
  return { read: () => readFile(handle), full: false, close: () => handle.close(), size };
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
  /** Every chunk read from the stream so far, until a reading goes on past the limit. */
  private kept: Buffer[] | undefined = [];
  private keptBytes = 0;
  /** Shared by every reading; never returned early, which would destroy the stream. */
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(
    private readonly stream: Readable,
    private readonly limit: number,
  ) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  get full(): boolean {
    return this.keptBytes >= this.limit;
  }

  get rereadable(): boolean {
    return this.kept !== undefined;
  }

  read(onward = false): AsyncIterable<Buffer> {
    if (this.kept === undefined) throw new Error('a stream read past its kept limit cannot be read again');
    return this.reading(this.kept, onward);
  }

  async close(): Promise<void> {
    this.kept = undefined;
    this.stream.destroy();
  }

  private async *reading(kept: Buffer[], onward: boolean): AsyncGenerator<Buffer> {
    // A chunk is kept before it is handed on, so a reading that stops anywhere leaves the next one whole.
    for (let index = 0; ; index++) {
      if (index < kept.length) {
        yield kept[index]!;
        continue;
      }
      if (this.full) {
        if (!onward) throw new Error('a stream read past its kept limit could not be read again');
        this.kept = undefined;
        break;
      }
      const next = await this.chunks.next();
      if (next.done) return;
      kept.push(next.value);
      this.keptBytes += next.value.length;
      yield next.value;
    }
    kept.length = 0;
    for (let next = await this.chunks.next(); !next.done; next = await this.chunks.next()) yield next.value;
  }
}

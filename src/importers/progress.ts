/**
 * A progress line for long imports, on standard error and only when it is a terminal (a log file or a
 * pipe would collect hundreds of lines). It is rewritten in place about once a second, and counts the
 * bytes read: lines say nothing of a file on one line (BRO's dispatches).
 */
import type { ImportInput } from './measurements/importInput.js';

export interface Progress {
  /** `bytes` of the input have been read. */
  update(bytes: number): void;
  /** Removes the line, so the final report starts on a clean line. */
  done(): void;
}

const INTERVAL_MS = 1000;
const MEGABYTE = 1_000_000;

const megabytes = (bytes: number) => (bytes / MEGABYTE).toFixed(1);

/** The progress of reading `name`, of `size` bytes when known (a regular file). */
export function progressLine(stream: NodeJS.WriteStream, name: string, size?: number): Progress {
  if (!stream.isTTY) return { update() {}, done() {} };
  const started = performance.now();
  let last = started;
  let shown = false;
  return {
    update(bytes) {
      const now = performance.now();
      if (now - last < INTERVAL_MS) return;
      last = now;
      shown = true;
      const rate = `${megabytes(bytes / ((now - started) / 1000))} MB/s`;
      const read =
        size !== undefined && size > 0
          ? `${megabytes(bytes)} of ${megabytes(size)} MB read (${Math.floor((100 * bytes) / size)} %, ${rate})`
          : `${megabytes(bytes)} MB read (${rate})`;
      stream.write(`\r\x1b[K${name}: ${read}`);
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}

/** `input`, each reading of it shown on `progress` (a second reading, after the direct path gave way, from 0). */
export function readingShown(input: ImportInput, progress: Progress): ImportInput {
  return {
    async *read() {
      let bytes = 0;
      for await (const chunk of input.read()) {
        bytes += chunk.length;
        progress.update(bytes);
        yield chunk;
      }
    },
    get full() {
      return input.full;
    },
    close: () => input.close(),
    ...(input.size !== undefined ? { size: input.size } : {}),
  };
}

/**
 * The log's destination: each line written to a file descriptor at once and whole, by one write(2) in
 * nearly every case, before the process does anything else.
 *
 * pino.destination({ sync: true }) (sonic-boom) does the same with more work per line: it measures the
 * line, writes it, encodes it once more into a new Buffer to see what is left, and schedules a 'drain'
 * for the next tick. Here a line costs its write and a byte count, and only a partial write encodes the
 * rest. At one line per request, sonic-boom's extra work is about the 10 % of a cached discovery
 * request's server CPU at which we keep a part of our own (docs/decisions/0009-home-made-parts.md).
 *
 * Like sonic-boom, a full pipe (a reader that does not keep up, on a non-blocking descriptor) is waited
 * for and written again: a line is never dropped or cut, and the process waits for its reader rather than
 * filling its memory. A reader that is gone for good (EPIPE) ends the logging, as pino's own does, instead
 * of the process.
 */
import { writeSync } from 'node:fs';

/** How long to wait for a full pipe's reader before writing again (sonic-boom waits 100 ms). */
const FULL_PIPE_WAIT_MS = 10;
const waiter = new Int32Array(new SharedArrayBuffer(4));

export interface LineDestination {
  write(line: string): void;
}

export function synchronousLines(fd: number): LineDestination {
  let readerGone = false;
  /** Bytes written: 0 while the descriptor is full (after a wait) or once the reader is gone. */
  const writeSome = (data: string | Uint8Array): number => {
    try {
      // Two calls only for the typings: writeSync's overloads take a string or a buffer, not either.
      return typeof data === 'string' ? writeSync(fd, data) : writeSync(fd, data);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') readerGone = true;
      else if (code === 'EAGAIN') Atomics.wait(waiter, 0, 0, FULL_PIPE_WAIT_MS);
      else throw error;
      return 0;
    }
  };
  return {
    write(line) {
      if (readerGone) return;
      let written = writeSome(line);
      // Nearly always the whole line at once: a string is encoded only by the write itself.
      if (readerGone || written === Buffer.byteLength(line)) return;
      const bytes = Buffer.from(line);
      while (!readerGone && written < bytes.length) written += writeSome(bytes.subarray(written));
    },
  };
}

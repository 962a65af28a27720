/**
 * A progress line for long imports, on standard error and only when it is a terminal (a log file or a
 * pipe would collect hundreds of lines). It is rewritten in place about once a second.
 */

export interface Progress {
  update(lines: number): void;
  /** Removes the line, so the final report starts on a clean line. */
  done(): void;
}

const INTERVAL_MS = 1000;

export function progressLine(stream: NodeJS.WriteStream, name: string): Progress {
  if (!stream.isTTY) return { update() {}, done() {} };
  const started = performance.now();
  let last = started;
  let shown = false;
  return {
    update(lines) {
      const now = performance.now();
      if (now - last < INTERVAL_MS) return;
      last = now;
      shown = true;
      const rate = Math.round(lines / ((now - started) / 1000));
      stream.write(
        `\r\x1b[K${name}: ${lines.toLocaleString('en-US')} lines read (${rate.toLocaleString('en-US')}/s)`,
      );
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}

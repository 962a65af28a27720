/**
 * BRO XML read whole by a reader, in small chunks, its calls kept by kind with the places tubes are
 * stated at (readerSink.ts keeps them in order without); or the FileRefused it throws.
 */
import { formatInstant } from '../../../../src/domain/datetime.js';
import { STATUSES } from '../../../../src/domain/status.js';
import {
  FileRefused,
  type FormatOptions,
  type ReaderFactory,
  type StatedTube,
} from '../../../../src/importers/formats/reader.js';

import { DEFAULT_OPTIONS, fixture as fixtureBytes } from '../readerSink.js';

export { pythonUuid5 } from '../readerSink.js';

export const fixture = (name: string) => fixtureBytes(`bro/${name}`).toString('utf8');

export const OPTIONS: FormatOptions = DEFAULT_OPTIONS;

export interface ReadLevel {
  line: number;
  tube: string;
  time: string;
  value: number;
  status: string;
  priority: number;
}

export interface Read {
  tubes: StatedTube[];
  levels: ReadLevel[];
  skips: Record<string, number>;
  lines: number;
}

/**
 * Reads `text` in chunks of `chunk` bytes (small ones split names, numbers and UTF-8 sequences, and
 * every GLD point, so saxes reads them all), or returns the FileRefused it throws.
 */
export function readAll(
  factory: ReaderFactory,
  text: string,
  options = OPTIONS,
  chunk = 65_536,
): Read | FileRefused {
  const read: Read = { tubes: [], levels: [], skips: {}, lines: 0 };
  const reader = factory(
    'test.xml',
    {
      tube: (tube) => read.tubes.push(tube),
      level: (line, tube, instant, value, status, priority) =>
        read.levels.push({
          line,
          tube,
          time: formatInstant(instant),
          value,
          status: STATUSES[status]!,
          priority,
        }),
      skipPoints: (reason, count = 1) => {
        read.skips[reason] = (read.skips[reason] ?? 0) + count;
      },
    },
    options,
  );
  const bytes = Buffer.from(text);
  try {
    for (let at = 0; at < bytes.length; at += chunk) reader.write(bytes.subarray(at, at + chunk));
    reader.end();
  } catch (error) {
    if (error instanceof FileRefused) return error;
    throw error;
  }
  read.lines = reader.lines;
  return read;
}

/** Metres between two WGS 84 positions (haversine on the mean Earth radius: ample below a kilometre). */
export function metresBetween(
  a: { longitude: number; latitude: number },
  b: { longitude: number; latitude: number },
): number {
  const radians = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * radians;
  const dLon = (b.longitude - a.longitude) * radians;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latitude * radians) * Math.cos(b.latitude * radians) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

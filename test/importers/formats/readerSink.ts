/**
 * What the format readers' unit tests need: a sink that keeps every call in order (a reader is pure, so
 * its calls are its whole result), a fixture fed in chunks of a given size, and UUID v5 identifiers
 * computed by Python's `uuid.uuid5`, independently of the code under test.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatInstant } from '../../../src/domain/datetime.js';
import { STATUSES, statusCode } from '../../../src/domain/status.js';
import type {
  FormatOptions,
  LevelSink,
  ReaderFactory,
  StatedTube,
} from '../../../src/importers/formats/reader.js';

export const FIXTURES = join(import.meta.dirname, 'fixtures');

export type Call =
  | { tube: Omit<StatedTube, 'place'>; line: number }
  | {
      level: [
        line: number,
        identifier: string,
        instant: string,
        value: number,
        status: string,
        priority: number,
      ];
    }
  | { skip: string; count: number }
  | { note: string };

export const DEFAULT_OPTIONS: FormatOptions = {
  timezone: 'Europe/Amsterdam',
  status: statusCode('provisional'),
  datum: 'NAP',
};

/** Reads `bytes` with a reader of `factory`, `chunkSize` bytes at a time; returns the sink's calls. */
export function read(
  factory: ReaderFactory,
  bytes: Buffer | string,
  options: Partial<FormatOptions> = {},
  chunkSize = 65_536,
): Call[] {
  const calls: Call[] = [];
  const sink: LevelSink = {
    tube: ({ place, ...tube }) => calls.push({ tube, line: place.line }),
    level: (line, identifier, instant, value, status, priority) =>
      calls.push({ level: [line, identifier, formatInstant(instant), value, STATUSES[status]!, priority] }),
    skipPoints: (skip, count = 1) => calls.push({ skip, count }),
    note: (note) => calls.push({ note }),
  };
  const reader = factory('test.csv', sink, { ...DEFAULT_OPTIONS, ...options });
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  for (let at = 0; at < buffer.length; at += chunkSize) reader.write(buffer.subarray(at, at + chunkSize));
  reader.end();
  return calls;
}

export const fixture = (path: string) => readFileSync(join(FIXTURES, path));

/** `uuid.uuid5(uuid.NAMESPACE_URL, name)` of each name, by Python. */
export function pythonUuid5(...names: string[]): string[] {
  const script = 'import sys, uuid\nfor name in sys.argv[1:]: print(uuid.uuid5(uuid.NAMESPACE_URL, name))';
  return execFileSync('/usr/bin/python3', ['-c', script, ...names], { encoding: 'utf8' })
    .trim()
    .split('\n');
}

/**
 * RD New to WGS 84 by the published approximation (Schreutelkamp and Strang van Hees, "Benaderingsformules
 * voor de transformatie tussen RD- en WGS84-kaartcoördinaten"): good to about a metre, and independent of
 * the projection library the reader uses.
 */
export function approximateWgs84(x: number, y: number) {
  const dx = (x - 155_000) * 1e-5;
  const dy = (y - 463_000) * 1e-5;
  const north =
    3235.65389 * dy -
    32.58297 * dx ** 2 -
    0.2475 * dy ** 2 -
    0.84978 * dx ** 2 * dy -
    0.0655 * dy ** 3 -
    0.01709 * dx ** 2 * dy ** 2 -
    0.00738 * dx +
    0.0053 * dx ** 4 -
    0.00039 * dx ** 2 * dy ** 3 +
    0.00033 * dx ** 4 * dy -
    0.00012 * dx * dy;
  const east =
    5260.52916 * dx +
    105.94684 * dx * dy +
    2.45656 * dx * dy ** 2 -
    0.81885 * dx ** 3 +
    0.05594 * dx * dy ** 3 -
    0.05607 * dx ** 3 * dy +
    0.01199 * dy -
    0.00256 * dx ** 3 * dy ** 2 +
    0.00128 * dx * dy ** 4 +
    0.00022 * dy ** 2 -
    0.00022 * dx ** 2 +
    0.00026 * dx ** 5;
  return { latitude: 52.1551744 + north / 3600, longitude: 5.38720621 + east / 3600 };
}

/** Metres between two nearby points. */
export function metresBetween(
  a: { latitude: number; longitude: number },
  b: { latitude: number; longitude: number },
) {
  const north = (a.latitude - b.latitude) * 111_320;
  const east = (a.longitude - b.longitude) * 111_320 * Math.cos((a.latitude * Math.PI) / 180);
  return Math.hypot(north, east);
}

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
    skip: (skip, count = 1) => calls.push({ skip, count }),
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

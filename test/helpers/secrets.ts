/**
 * No API key in any log line of the whole suite. `npm test` (test/run.ts) names a folder in
 * GWAPI_TEST_CAPTURE_DIR; while the suite runs, every log line of every app a test builds (startApi) and
 * all standard output and error of every `gwapi` process a test starts (spawnCli) are copied there, and
 * every key a test creates is written down (testkit/outputCapture.ts). When tap is done, test/run.ts scans it all (scanCaptures)
 * and fails the run on a key, or any 19 consecutive characters of a known key, anywhere but the two
 * places a key belongs: the output of `gwapi keys create` and the banner of `gwapi demo`.
 *
 * Without GWAPI_TEST_CAPTURE_DIR (tap run directly) nothing is captured.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Source } from '../../testkit/outputCapture.js';

// The scan of what testkit/outputCapture.ts kept.

/** A whole key (src/keys/format.ts): `gw_` and 43 base64url characters. */
const KEY = /gw_[A-Za-z0-9_-]{43}/g;
/** `gw_` and 16 or more key characters: a key or most of one (what the logger scrubs, too). */
const KEY_LIKE = /gw_[A-Za-z0-9_-]{16,}/;
const KEY_CHARACTERS = /[A-Za-z0-9_-]{19,}/g;
/** Fragments of this length are looked up; one is checked every STEP characters of a run. */
const WINDOW = 16;
const STEP = 4;

export interface Leak {
  file: string;
  line: number;
  what: string;
}

export interface ScanResult {
  files: number;
  lines: number;
  keys: number;
  leaks: Leak[];
}

function filesIn(dir: string, source: Source | 'keys'): string[] {
  try {
    return readdirSync(join(dir, source)).map((name) => join(dir, source, name));
  } catch {
    return [];
  }
}

const linesOf = (file: string) => readFileSync(file, 'latin1').split('\n');

/** The lines of a demo's standard output that are log lines (JSON), not its banner. */
const isLogLine = (line: string) => line.startsWith('{');

/**
 * Every captured line but those that may show a key, checked for a whole key, for anything shaped like
 * one, and for WINDOW + STEP - 1 consecutive characters of any key the suite created (a key cut up or
 * without its prefix). Keys are collected from what tests wrote down and from the output that shows them.
 */
export function scanCaptures(dir: string): ScanResult {
  const keys = new Set<string>();
  for (const file of filesIn(dir, 'keys')) for (const line of linesOf(file)) if (line) keys.add(line);
  for (const file of [...filesIn(dir, 'keys-create'), ...filesIn(dir, 'demo')]) {
    for (const match of readFileSync(file, 'latin1').matchAll(KEY)) keys.add(match[0]);
  }
  // Every window of every key body; a fragment of WINDOW + STEP - 1 characters holds one that starts
  // at a multiple of STEP of its run, so only those are looked up.
  const windows = new Set<string>();
  for (const key of keys) {
    const body = key.slice(3);
    for (let i = 0; i + WINDOW <= body.length; i++) windows.add(body.slice(i, i + WINDOW));
  }

  const result: ScanResult = { files: 0, lines: 0, keys: keys.size, leaks: [] };
  /** What is wrong with a line, if anything. */
  const leakIn = (line: string): string | undefined => {
    if (KEY_LIKE.test(line)) return 'text shaped like a key';
    for (const run of line.matchAll(KEY_CHARACTERS)) {
      for (let i = 0; i + WINDOW <= run[0].length; i += STEP) {
        if (windows.has(run[0].slice(i, i + WINDOW))) return 'part of a key the suite created';
      }
    }
    return undefined;
  };
  const check = (file: string, lines: string[], include: (line: string) => boolean) => {
    result.files++;
    for (const [index, line] of lines.entries()) {
      if (line === '' || !include(line)) continue;
      result.lines++;
      const what = leakIn(line);
      if (what) result.leaks.push({ file, line: index + 1, what });
    }
  };
  for (const file of [...filesIn(dir, 'log'), ...filesIn(dir, 'process')])
    check(file, linesOf(file), () => true);
  for (const file of filesIn(dir, 'demo')) check(file, linesOf(file), isLogLine);
  result.files += filesIn(dir, 'keys-create').length;
  return result;
}

/**
 * One command for two layouts of a file: the reader is chosen by the file's first byte that is not
 * blank (after a byte order mark; spaces, tabs and line breaks): `<` opens the XML reader, anything
 * else the CSV one. The blank start is held until then and given to the chosen reader, so its lines
 * stay the file's. A command that reads one layout only refuses the other at its start, saying what the
 * file is and what the command reads.
 */
import {
  FileRefused,
  type FormatOptions,
  type LevelReader,
  type LevelSink,
  type ReaderFactory,
} from './reader.js';

const BLANK = new Set([0x20, 0x09, 0x0a, 0x0d]);
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);
const ANGLE_BRACKET = 0x3c;
const LINE_FEED = 0x0a;
/** How much of a refused file's start its reason quotes. */
const OPENING = 20;

export interface Layouts {
  xml?: ReaderFactory | undefined;
  csv?: ReaderFactory | undefined;
  /** What the command reads, for a file of the layout it lacks: `` `gwapi import dino` reads DINO CSV ``. */
  reads: string;
}

export function byFirstByte(layouts: Layouts): ReaderFactory {
  return (file: string, sink: LevelSink, options: FormatOptions) => {
    let chosen: LevelReader | undefined;
    let held: Buffer[] = [];
    let start = true;
    let line = 1;
    const open = (first: number | undefined, opening = '') => {
      const layout = first === ANGLE_BRACKET ? 'xml' : 'csv';
      const read = layouts[layout];
      if (!read) {
        const found = layout === 'xml' ? 'is XML' : 'is not XML';
        throw new FileRefused(
          { line },
          'file',
          `${found} (it starts with ${JSON.stringify(opening)}): ${layouts.reads}`,
        );
      }
      chosen = read(file, sink, options);
      for (const chunk of held) chosen.write(chunk);
      held = [];
      return chosen;
    };
    return {
      write(chunk: Buffer) {
        if (chosen) return chosen.write(chunk);
        const from = start && chunk.subarray(0, 3).equals(BYTE_ORDER_MARK) ? 3 : 0;
        start = false;
        const at = chunk.findIndex((byte, i) => i >= from && !BLANK.has(byte));
        line += lineBreaks(chunk, at === -1 ? chunk.length : at);
        if (at === -1) held.push(chunk);
        else open(chunk[at], chunk.toString('utf8', at, at + OPENING).split('\n')[0]).write(chunk);
      },
      end() {
        (chosen ?? open(undefined)).end();
      },
      get lines() {
        return chosen?.lines ?? 0;
      },
    };
  };
}

function lineBreaks(chunk: Buffer, end: number): number {
  let count = 0;
  for (let at = chunk.indexOf(LINE_FEED); at >= 0 && at < end; at = chunk.indexOf(LINE_FEED, at + 1)) count++;
  return count;
}

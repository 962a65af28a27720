/**
 * One command for two layouts of a file: the reader is chosen by the file's first byte that is not
 * blank (after a byte order mark; spaces, tabs and line breaks): `<` opens the XML reader, anything
 * else the CSV one. The blank start is held until then and given to the chosen reader, so its lines
 * stay the file's.
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

export interface Layouts {
  xml?: ReaderFactory | undefined;
  csv?: ReaderFactory | undefined;
}

export function byFirstByte(layouts: Layouts): ReaderFactory {
  return (file: string, sink: LevelSink, options: FormatOptions) => {
    let chosen: LevelReader | undefined;
    let held: Buffer[] = [];
    let start = true;
    const open = (first: number | undefined) => {
      const layout = first === ANGLE_BRACKET ? 'xml' : 'csv';
      const read = layouts[layout];
      if (!read)
        throw new FileRefused(
          { line: 1 },
          'file',
          `this version reads no ${layout.toUpperCase()} of this format`,
        );
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
        if (at === -1) held.push(chunk);
        else open(chunk[at]).write(chunk);
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

/**
 * Rows of a measurements body counted as it streams, so that a body of hundreds of MB is checked
 * without being kept: JSON by its `"observedAt":` keys, CSV by its lines after the header, Arrow by
 * reading the stream with Apache Arrow's reader (the only one kept whole: its bytes are the smallest).
 */
import { tableFromIPC } from 'apache-arrow';
import type { Format } from './networkFixture.js';

const JSON_KEY = Buffer.from('"observedAt":');

export interface RowCounter {
  onChunk(chunk: Buffer): void;
  /** Rows, and for Arrow the tubes of its tubeIdentifier dictionary, when the column is there. */
  done(): { rows: number; tubes?: number };
}

export function rowCounter(format: Format): RowCounter {
  let rows = 0;
  if (format === 'arrow') {
    const chunks: Buffer[] = [];
    return {
      onChunk: (chunk) => chunks.push(chunk),
      done() {
        const table = tableFromIPC(Buffer.concat(chunks));
        const tubes = table.getChild('tubeIdentifier');
        const dictionary = tubes?.data[0]?.dictionary;
        return { rows: table.numRows, ...(dictionary ? { tubes: dictionary.length } : {}) };
      },
    };
  }
  if (format === 'csv') {
    return {
      onChunk(chunk) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows++;
      },
      done: () => ({ rows: rows - 1 }),
    };
  }
  // A key split between two chunks is found in the last bytes of the one joined to the next.
  let tail = Buffer.alloc(0);
  return {
    onChunk(chunk) {
      const text = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
      for (let at = text.indexOf(JSON_KEY); at !== -1; at = text.indexOf(JSON_KEY, at + JSON_KEY.length)) {
        rows++;
      }
      tail = Buffer.from(text.subarray(Math.max(0, text.length - (JSON_KEY.length - 1))));
    },
    done: () => ({ rows }),
  };
}

/** Reads a textual UUID straight into 16 bytes, checking it on the way: one pass, no intermediate string. */

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[65 + i] = 10 + i;
  HEX[97 + i] = 10 + i;
}

const hexValue = (code: number) => (code < 128 ? HEX[code]! : -1);

/**
 * Writes the UUID in `text[start, end)` (8-4-4-4-12 hex digits, any case) to `target` at `offset`.
 * Returns false, leaving the bytes undefined, when it is not a UUID.
 */
export function writeUuid(text: string, start: number, end: number, target: Buffer, offset: number): boolean {
  if (end - start !== 36) return false;
  let at = offset;
  let i = start;
  while (i < end) {
    const position = i - start;
    if (position === 8 || position === 13 || position === 18 || position === 23) {
      if (text.charCodeAt(i) !== 45 /* - */) return false;
      i++;
      continue;
    }
    const high = hexValue(text.charCodeAt(i));
    const low = hexValue(text.charCodeAt(i + 1));
    if (high < 0 || low < 0) return false;
    target[at++] = (high << 4) | low;
    i += 2;
  }
  return true;
}

/** Reading Arrow IPC streams in tests with apache-arrow's own reader. */
import { type MessageHeader, MessageReader, type Table } from 'apache-arrow';

/** The header types of a stream's messages, as apache-arrow's message reader finds them. */
export function messageTypes(bytes: Buffer): MessageHeader[] {
  const reader = new MessageReader(bytes);
  const types: MessageHeader[] = [];
  for (let message = reader.readMessage(); message; message = reader.readMessage()) {
    types.push(message.headerType);
    reader.readMessageBody(message.bodyLength);
  }
  return types;
}

/** Microseconds since 1970 of the JSON's RFC 3339 UTC text `2024-01-01T00:15:00.000123Z`. */
export function micros(text: string): bigint {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(text);
  if (!match) throw new Error(`not an RFC 3339 UTC text: ${text}`);
  return BigInt(Date.parse(`${match[1]}Z`)) * 1000n + BigInt((match[2] ?? '').padEnd(6, '0'));
}

const doubles = new Float64Array(1);
const doubleBits = new BigUint64Array(doubles.buffer);
const bitsOf = (value: number) => {
  doubles[0] = value;
  return doubleBits[0]!;
};

/** How many of `actual` differ from `expected` (bigints as they are, doubles by their bits). */
export function mismatches(actual: ArrayLike<number | bigint>, expected: (number | bigint)[]): number {
  if (actual.length !== expected.length) return Math.max(actual.length, expected.length);
  let differ = 0;
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i]!;
    const got = actual[i]!;
    if (typeof want === 'bigint' ? BigInt(got) !== want : bitsOf(Number(got)) !== bitsOf(want)) differ++;
  }
  return differ;
}

/** A column of an apache-arrow table as one array of its raw values (dictionary columns: indices). */
export function arrowColumn(table: Table, name: string): (number | bigint)[] {
  const vector = table.getChild(name);
  if (!vector) throw new Error(`no column ${name}`);
  return vector.data.flatMap((data) => Array.from(data.values as ArrayLike<number | bigint>));
}

/**
 * The paging cursor of `/v1/ogc` items: where the next page starts (the last feature's key), in the
 * clear, and a MAC over it, the collection and the filter, keyed by the API key that read the page
 * (decisions/0121). So an altered cursor, one of another filter or one of another key fails the
 * check, every instance checks it without a secret of its own, and the cursor holds nothing secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Bytes of the MAC kept: forging 128 bits is as hopeless as forging all 256. */
const MAC_BYTES = 16;

const macOf = (key: string, binding: string, payload: string): Buffer =>
  createHmac('sha256', key).update(binding).update('\n').update(payload).digest().subarray(0, MAC_BYTES);

/** The cursor after `position`, bound to `key` and `binding` (the collection and its filter). */
export function writeCursor(key: string, binding: string, position: readonly (string | number)[]): string {
  const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${payload}.${macOf(key, binding, payload).toString('base64url')}`;
}

/** The position `text` holds, or undefined when it is not a cursor this key wrote for this binding. */
export function readCursor(key: string, binding: string, text: string): unknown[] | undefined {
  const [payload, mac, ...rest] = text.split('.');
  if (payload === undefined || mac === undefined || rest.length > 0) return undefined;
  const given = Buffer.from(mac, 'base64url');
  const expected = macOf(key, binding, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const position: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return Array.isArray(position) ? position : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sync tokens: a response's snapshot and the key's view, bound to the key by an HMAC. Not secret (the
 * client may show it to anyone) and not encrypted: it only has to be impossible to make or alter
 * without the server's key, so that a token says exactly which snapshot a response was read from.
 *
 * A snapshot's transaction ids name transactions of one history only: a restored database hands the
 * same ids out again to other writes. So the token also holds its place in the WAL history
 * (src/db/walHistory.ts), and is gone (410) where that place is not on the serving database's history.
 *
 * Bytes, then base64url without padding (at most MAX_TOKEN_CHARS):
 *   1        format (2; a token of format 1, from before places were kept, reads as one with no place)
 *   varint   xmin
 *   varint   xmax - xmin
 *   varint   number of xip
 *   varint   each xip minus the one before (the first: minus xmin); ascending
 *   8        the system identifier, big-endian          (format 2 only)
 *   varint   the timeline                               (format 2 only)
 *   varint   the LSN where the timeline began           (format 2 only)
 *   varint   the LSN of the place                       (format 2 only)
 *   16       the view (sql.ts, currentSyncPoint)
 *   16       HMAC-SHA256 over a label, the key id and all the bytes above, cut to 128 bits
 * varint: unsigned LEB128, the shortest form.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HistoryPlace } from '../db/walHistory.js';

/** A snapshot as pg_current_snapshot() gives it, and the fingerprint of what the key could see in it. */
export interface SyncPoint {
  /** Every transaction below it had ended (committed ones are visible). */
  xmin: bigint;
  /** Every transaction from it on had not ended (not visible). */
  xmax: bigint;
  /** Transactions in [xmin, xmax) still running at the snapshot (not visible); ascending. */
  xip: readonly bigint[];
  /** VIEW_BYTES that change whenever what the key may read changes (sql.ts). */
  view: Buffer;
  /** Where the snapshot stands in the WAL history; none in a token from before places were kept. */
  place: HistoryPlace | undefined;
}

export const MAX_TOKEN_CHARS = 200;
/** 200 base64url characters carry 150 bytes exactly. */
const MAX_TOKEN_BYTES = (MAX_TOKEN_CHARS * 3) / 4;
export const VIEW_BYTES = 16;
const MAC_BYTES = 16;
const FORMAT = 2;
const FORMAT_WITHOUT_PLACE = 1;
const SYSTEM_BYTES = 8;
const MAX_XID = (1n << 64n) - 1n;
const TOKEN_TEXT = /^[A-Za-z0-9_-]+$/;

function pushVarint(out: number[], value: bigint): void {
  let rest = value;
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
}

function payload(point: SyncPoint): Buffer {
  const out: number[] = [FORMAT];
  pushVarint(out, point.xmin);
  pushVarint(out, point.xmax - point.xmin);
  pushVarint(out, BigInt(point.xip.length));
  let previous = point.xmin;
  for (const xid of point.xip) {
    pushVarint(out, xid - previous);
    previous = xid;
  }
  const { place } = point;
  if (!place) throw new Error('a token is issued with its place');
  const system = Buffer.alloc(SYSTEM_BYTES);
  system.writeBigUInt64BE(place.system);
  const rest: number[] = [];
  pushVarint(rest, BigInt(place.timeline));
  pushVarint(rest, place.begin);
  pushVarint(rest, place.lsn);
  return Buffer.concat([Buffer.from(out), system, Buffer.from(rest), point.view]);
}

function mac(bytes: Buffer, keyId: string, secret: Buffer): Buffer {
  return createHmac('sha256', secret)
    .update(`gwapi sync token\0${keyId}\0`)
    .update(bytes)
    .digest()
    .subarray(0, MAC_BYTES);
}

/**
 * A token that fits MAX_TOKEN_CHARS. When the snapshot's running transactions (xip) do not all fit,
 * xmax is lowered to the first of them that does not, and the rest are left out: the token's snapshot
 * then sees a subset of what the response's snapshot saw (every transaction from that xid on counts as
 * not seen). So nothing is ever missed; a later delta may repeat changes the response already held
 * (those of transactions that ended between that xid and the real xmax), which a client's upsert absorbs.
 */
export function fittingPoint(point: SyncPoint): SyncPoint {
  for (let kept = point.xip.length; ; kept--) {
    const fitted =
      kept === point.xip.length ? point : { ...point, xmax: point.xip[kept]!, xip: point.xip.slice(0, kept) };
    if (payload(fitted).length + MAC_BYTES <= MAX_TOKEN_BYTES) return fitted;
  }
}

/**
 * What a snapshot read on a hot standby can vouch for. PostgreSQL keeps a standby snapshot's running
 * xids apart from its xip (in subxip), so pg_current_snapshot() there lists none, and every xid in
 * [xmin, xmax) would count as seen, running ones too: a delta since such a token would miss their
 * changes for good. Only the xids below xmin are surely ended; the point keeps those alone. A delta
 * since it may repeat changes the response held (as one of fittingPoint's), never miss one.
 */
export const standbyPoint = <P extends SyncPoint>(point: P): P => ({ ...point, xmax: point.xmin, xip: [] });

/**
 * Whether the snapshot `now` sees every transaction `since` saw ended: each one below `since`'s xmax
 * that `now` counts as not yet begun (from its xmax on) or running (its xip) was running for `since`
 * too. On the primary a later snapshot always does; a replica's may not, until it has replayed as far
 * as `since`'s source had.
 */
export function seesAllOf(now: SyncPoint, since: SyncPoint): boolean {
  const running = new Set(since.xip);
  if (now.xmax < since.xmax) {
    const unbegun = since.xip.filter((xid) => xid >= now.xmax).length;
    if (BigInt(unbegun) !== since.xmax - now.xmax) return false;
  }
  return now.xip.every((xid) => xid >= since.xmax || running.has(xid));
}

/**
 * The token for a response read in `point`'s snapshot by key `keyId`: URL-safe, at most
 * MAX_TOKEN_CHARS, and readable (readSyncToken) only with the same key id and secret.
 */
export function issueSyncToken(point: SyncPoint, keyId: string, secret: Buffer): string {
  if (point.view.length !== VIEW_BYTES) throw new Error(`a view is ${VIEW_BYTES} bytes`);
  const bytes = payload(fittingPoint(point));
  return Buffer.concat([bytes, mac(bytes, keyId, secret)]).toString('base64url');
}

/** Reads varints from a buffer, each checked: at most 64 bits, in its shortest form. */
class Reader {
  at = 0;
  constructor(private readonly bytes: Buffer) {}

  varint(): bigint | undefined {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.bytes[this.at++];
      if (byte === undefined) return undefined;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return (byte === 0 && shift > 0n) || value > MAX_XID ? undefined : value;
    }
    return undefined;
  }
}

function parse(bytes: Buffer): SyncPoint | undefined {
  if (bytes[0] !== FORMAT && bytes[0] !== FORMAT_WITHOUT_PLACE) return undefined;
  const reader = new Reader(bytes);
  reader.at = 1;
  const xmin = reader.varint();
  const span = reader.varint();
  const count = reader.varint();
  if (xmin === undefined || span === undefined || count === undefined || xmin + span > MAX_XID)
    return undefined;
  const xmax = xmin + span;
  const xip: bigint[] = [];
  let previous = xmin;
  for (let i = 0n; i < count; i++) {
    const step = reader.varint();
    if (step === undefined || (i > 0n && step === 0n)) return undefined;
    previous += step;
    if (previous >= xmax) return undefined;
    xip.push(previous);
  }
  let place: HistoryPlace | undefined;
  if (bytes[0] === FORMAT) {
    if (bytes.length - reader.at < SYSTEM_BYTES) return undefined;
    const system = bytes.readBigUInt64BE(reader.at);
    reader.at += SYSTEM_BYTES;
    const timeline = reader.varint();
    const begin = reader.varint();
    const lsn = reader.varint();
    if (timeline === undefined || begin === undefined || lsn === undefined || timeline > 0xffffffffn)
      return undefined;
    place = { system, timeline: Number(timeline), begin, lsn };
  }
  if (bytes.length - reader.at !== VIEW_BYTES) return undefined;
  return { xmin, xmax, xip, view: Buffer.from(bytes.subarray(reader.at)), place };
}

/**
 * The sync point of a token this service issued to `keyId`; undefined for anything else: not a token
 * (malformed, too long, not canonical base64url), altered in any character, or issued to another key
 * (or under another secret). The route answers undefined with 400 and `errors.changedSince`.
 */
export function readSyncToken(text: string, keyId: string, secret: Buffer): SyncPoint | undefined {
  if (text.length > MAX_TOKEN_CHARS || !TOKEN_TEXT.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  // Two texts may decode to the same bytes (the unused bits of the last character): only ours counts.
  if (bytes.toString('base64url') !== text || bytes.length <= MAC_BYTES) return undefined;
  const signed = bytes.subarray(0, bytes.length - MAC_BYTES);
  if (!timingSafeEqual(mac(signed, keyId, secret), bytes.subarray(bytes.length - MAC_BYTES)))
    return undefined;
  return parse(signed);
}

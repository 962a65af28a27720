/**
 * The token's encoding alone: round trips, what reading refuses (garbage, any altered character, another
 * key, another secret), and the fallback for a snapshot with more running transactions than fit.
 */
import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import {
  fittingPoint,
  issueSyncToken,
  MAX_TOKEN_CHARS,
  readSyncToken,
  type SyncPoint,
  seesAllOf,
  VIEW_BYTES,
} from '../../src/sync/token.js';

const secret = randomBytes(64);
const view = randomBytes(VIEW_BYTES);
/** A place on a third timeline, begun at 0/3000000. */
const place = { system: 7_312_415_190_288_741_234n, timeline: 3, begin: 0x3000000n, lsn: 0x5001234n };
const point: SyncPoint = { xmin: 748_213n, xmax: 748_230n, xip: [748_213n, 748_220n, 748_229n], view, place };

/** Whether `xid` counts as seen by the snapshot (committed, as a delta assumes of the ones it reads). */
const sees = (p: SyncPoint, xid: bigint) => xid < p.xmin || (xid < p.xmax && !p.xip.includes(xid));

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

t.test('a token reads back as its point, for its key only', async (t) => {
  const token = issueSyncToken(point, 'key-a', secret);
  t.match(token, /^[A-Za-z0-9_-]+$/);
  t.ok(token.length <= MAX_TOKEN_CHARS);
  t.same(readSyncToken(token, 'key-a', secret), point);
  t.equal(readSyncToken(token, 'key-b', secret), undefined, 'another key');
  t.equal(readSyncToken(token, 'key-a', randomBytes(64)), undefined, 'another secret (another database)');
  const empty = { xmin: 3n, xmax: 3n, xip: [], view, place };
  t.same(readSyncToken(issueSyncToken(empty, 'k', secret), 'k', secret), empty, 'no running transaction');
  const large = {
    xmin: (1n << 64n) - 10n,
    xmax: (1n << 64n) - 1n,
    xip: [(1n << 64n) - 2n],
    view,
    place: { system: (1n << 64n) - 1n, timeline: 0xffffffff, begin: (1n << 64n) - 2n, lsn: (1n << 64n) - 1n },
  };
  t.same(readSyncToken(issueSyncToken(large, 'k', secret), 'k', secret), large, 'the largest xids');
});

t.test('a token from before places were kept reads as one with no place (a 410, not a 400)', async (t) => {
  // Format 1 as 1.3.0 issued it: xmin 5, xmax 9, one running xid 7, the view, its MAC.
  const signed = Buffer.concat([Buffer.from([1, 5, 4, 1, 2]), view]);
  const mac = createHmac('sha256', secret).update('gwapi sync token\0key-a\0').update(signed).digest();
  const token = Buffer.concat([signed, mac.subarray(0, 16)]).toString('base64url');
  t.same(readSyncToken(token, 'key-a', secret), { xmin: 5n, xmax: 9n, xip: [7n], view, place: undefined });
  t.throws(
    () => issueSyncToken({ ...point, place: undefined }, 'key-a', secret),
    'none is issued without one',
  );
});

t.test('every altered character, and garbage, is refused', async (t) => {
  const token = issueSyncToken(point, 'key-a', secret);
  let accepted = 0;
  for (let i = 0; i < token.length; i++) {
    for (const c of TOKEN_ALPHABET) {
      if (c === token[i]) continue;
      const altered = token.slice(0, i) + c + token.slice(i + 1);
      if (readSyncToken(altered, 'key-a', secret) !== undefined) accepted++;
    }
  }
  t.equal(accepted, 0, `none of ${token.length * 63} one-character changes is accepted`);
  for (const garbage of [
    '',
    'x',
    token.slice(0, -1),
    `${token}A`,
    `${token}=`,
    token.replace(/^./, '+'),
    'A'.repeat(MAX_TOKEN_CHARS + 1),
    ' '.repeat(10),
    `${token.slice(0, 10)}%20${token.slice(10)}`,
  ]) {
    t.equal(readSyncToken(garbage, 'key-a', secret), undefined, JSON.stringify(garbage.slice(0, 40)));
  }
});

t.test('a snapshot whose running transactions do not fit: lowered, never missing anything', async (t) => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 3n, max: 1n << 62n }),
      fc.uniqueArray(fc.bigInt({ min: 0n, max: 1n << 40n }), { maxLength: 400 }),
      fc.bigInt({ min: 1n, max: 1n << 41n }),
      (xmin, offsets, extra) => {
        const xip = offsets.sort((a, b) => (a < b ? -1 : 1)).map((o) => xmin + o);
        const xmax = (xip.at(-1) ?? xmin) + extra;
        const p: SyncPoint = { xmin, xmax, xip, view, place };
        const token = issueSyncToken(p, 'key', secret);
        const read = readSyncToken(token, 'key', secret);
        if (token.length > MAX_TOKEN_CHARS || !read) return false;
        t.same(read, fittingPoint(p));
        // What the token's snapshot counts as seen, the response's snapshot saw: no change is missed.
        const probes = [...xip, xmin - 1n, xmin, xmax - 1n, xmax, read.xmax, read.xmax - 1n];
        return probes.every((xid) => !sees(read, xid) || sees(p, xid));
      },
    ),
    { numRuns: 300 },
  );
  const crowded: SyncPoint = {
    xmin: 1_000_000n,
    xmax: 1_000_500n,
    xip: Array.from({ length: 200 }, (_, i) => 1_000_000n + BigInt(i * 2)),
    view,
    place,
  };
  const read = readSyncToken(issueSyncToken(crowded, 'key', secret), 'key', secret)!;
  t.ok(read.xip.length > 40 && read.xip.length < 200, `${read.xip.length} of 200 running transactions kept`);
  t.equal(read.xmax, crowded.xip[read.xip.length], 'xmax lowered to the first one left out');
});

t.test('seesAllOf: whether a snapshot sees every transaction another one saw ended', async (t) => {
  // Small xids, so that both snapshots overlap often; checked against each xid in turn.
  const snapshot = fc
    .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 6 }), fc.array(fc.nat(6)))
    .map(([xmin, span, offsets]): SyncPoint => {
      const xip = [...new Set(offsets.filter((o) => o < span))].sort((a, b) => a - b);
      return {
        xmin: BigInt(xmin),
        xmax: BigInt(xmin + span),
        xip: xip.map((o) => BigInt(xmin + o)),
        view,
        place,
      };
    });
  fc.assert(
    fc.property(snapshot, snapshot, (now, since) => {
      let expected = true;
      for (let xid = 0n; xid < since.xmax; xid++) if (sees(since, xid) && !sees(now, xid)) expected = false;
      return seesAllOf(now, since) === expected;
    }),
    { numRuns: 2000 },
  );
  const later = { xmin: 748_229n, xmax: 748_240n, xip: [748_229n, 748_235n], view, place };
  t.ok(seesAllOf(later, point), 'a later snapshot of the same server');
  t.notOk(seesAllOf(point, later), 'an earlier one: xids from 748230 on are not begun for it');
  t.notOk(
    seesAllOf({ ...later, xip: [748_220n, 748_229n] }, { ...later, xip: [748_229n] }),
    'one xid still running that the other saw ended (a replica behind, same xmax)',
  );
});

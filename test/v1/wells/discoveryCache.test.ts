/**
 * The discovery cache's bookkeeping, on a source that counts what it is asked (the cache's own seam;
 * the database behind it is exercised over HTTP in compression.test.ts and connectionWait.test.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import type { Client } from '../../../src/keys/clients.js';
import {
  type CachedDiscovery,
  createDiscoveryCache,
  type DiscoverySource,
  VERSION_FRESH_MS,
} from '../../../src/v1/wells/discoveryCache.js';

/** What the cache under test writes: the document itself as JSON, marked as GeoJSON. */
const FORMATS = {
  formats: ['json', 'geojson'] as const,
  write: (document: string, format: string) => Buffer.from(format === 'json' ? document : `geo:${document}`),
};
const json = (cached: CachedDiscovery<string, string>) => cached.representation('json');

function countingSource(): DiscoverySource<string> & {
  version: bigint;
  reads: number;
  loads: number;
  fail: boolean;
} {
  const source = {
    version: 1n,
    reads: 0,
    loads: 0,
    fail: false,
    async currentVersion() {
      source.reads++;
      if (source.fail) throw new Error('database gone');
      return String(source.version);
    },
    async load(client: Client) {
      source.loads++;
      return {
        version: String(source.version),
        changedAt: new Date(),
        document: `${client.keyId}@${source.version}`,
      };
    },
  };
  return source;
}

const everything: Client = { keyId: 'key_all', allTubes: true, grants: new Set() };

t.test('one version read per VERSION_FRESH_MS serves every request', async (t) => {
  const source = countingSource();
  const cache = createDiscoveryCache(source, FORMATS);
  const first = await cache.get(everything);
  t.equal(json(first).body.toString(), 'key_all@1');
  const bodies = await Promise.all(Array.from({ length: 50 }, () => cache.get(everything)));
  t.ok(
    bodies.every((body) => body === first),
    'the cached body, every time',
  );
  t.equal(source.reads, 1, 'fifty requests, one version read');
  t.equal(source.loads, 1);

  source.version = 2n;
  t.equal(
    json(await cache.get(everything)).body.toString(),
    'key_all@1',
    'within the window: the body read before',
  );
  await sleep(VERSION_FRESH_MS + 20);
  t.equal(json(await cache.get(everything)).body.toString(), 'key_all@2', 'after it: the change shows');
  t.equal(source.reads, 2);
  t.equal(source.loads, 2);
});

t.test('a body rebuilt at a newer version than the shared read is not rebuilt again', async (t) => {
  const source = countingSource();
  const cache = createDiscoveryCache(source, FORMATS);
  await cache.get(everything); // reads version 1 and loads
  // Another grant set loaded after a change, while the shared read still says 1.
  source.version = 5n;
  const other: Client = { keyId: 'key_some', allTubes: false, grants: new Set([7]) };
  t.equal(json(await cache.get(other)).body.toString(), 'key_some@5');
  await cache.get(other);
  t.equal(source.loads, 2, 'version 5 is at least as new as the shared read of version 1');
});

t.test('a failed version read is not kept', async (t) => {
  const source = countingSource();
  const cache = createDiscoveryCache(source, FORMATS);
  await cache.get(everything); // an empty cache loads; nothing to compare a version with yet
  await sleep(VERSION_FRESH_MS + 20);
  source.fail = true;
  await t.rejects(async () => cache.get(everything), { message: 'database gone' });
  t.equal(source.reads, 1);
  source.fail = false;
  t.equal(json(await cache.get(everything)).body.toString(), 'key_all@1', 'the next request reads again');
  t.equal(source.reads, 2, 'at once, not after the window');
});

t.test('a body is compressed once per coding, off the event loop', async (t) => {
  // ~230 KB of discovery-like JSON: long enough that brotli's slow level takes a while.
  const wells = Array.from({ length: 1000 }, (_, i) => ({
    name: `Well ${i}`,
    tubes: [1, 2, 3].map((n) => ({ identifier: randomUUID(), number: String(n) })),
  }));
  const body = Buffer.from(JSON.stringify(wells));
  const cache = createDiscoveryCache(
    {
      currentVersion: async () => '1',
      load: async () => ({ version: '1', changedAt: new Date(), document: body.toString() }),
    },
    FORMATS,
  );
  const cached = json(await cache.get(everything));
  const br = cached.encoded('br');
  if (!(br instanceof Promise)) throw new Error('the first request for a coding must wait for it');
  t.equal(cached.encoded('br'), br, 'a second request waits for the same compression');
  let done = false;
  void br.then(() => {
    done = true;
  });
  await setImmediate();
  t.notOk(done, 'the event loop turned while brotli worked');
  t.same(brotliDecompressSync(await br), body, 'br decodes to the body');
  t.same(gunzipSync(await cached.encoded('gzip')), body, 'gzip decodes to the body');
  t.ok((await br).length < body.length / 3, 'and is much smaller');
  t.equal(cached.encoded('br'), await br, 'once done, the bytes themselves: no promise to wait for');
});

t.test('a fresh cached body is answered at once; a promise only while something is read', async (t) => {
  const source = countingSource();
  const cache = createDiscoveryCache(source, FORMATS);
  const loading = cache.get(everything);
  t.ok(loading instanceof Promise, 'an empty cache: the body is read');
  const first = await loading;
  const second = cache.get(everything);
  t.ok(second instanceof Promise, 'the next request reads the version once');
  t.equal(await second, first);
  t.equal(cache.get(everything), first, 'then the same body at once, not a promise of it');

  await sleep(VERSION_FRESH_MS + 20);
  const afterWindow = cache.get(everything);
  t.ok(afterWindow instanceof Promise, 'after the window: waits for the new version read');
  t.equal(await afterWindow, first, 'the version has not changed: the same body');
  t.equal(cache.get(everything), first, 'and at once again after that read');
  t.equal(source.reads, 2, 'one read in the window, one after it');
  t.equal(source.loads, 1);
});

t.test('compressed bodies count against the byte budget', async (t) => {
  // Random bytes in base64 hardly compress: each coding adds most of the body's bytes again.
  const source = countingSource();
  const sizes = new Map<string, string>();
  source.load = async (client: Client) => {
    source.loads++;
    const body = sizes.get(client.keyId) ?? randomBytes(1500).toString('base64');
    sizes.set(client.keyId, body);
    return { version: '1', changedAt: new Date(), document: body };
  };
  const cache = createDiscoveryCache(source, { ...FORMATS, maxBytes: 5000 });
  const first: Client = { keyId: 'key_first', allTubes: false, grants: new Set([1]) };
  const second: Client = { keyId: 'key_second', allTubes: false, grants: new Set([2]) };
  const firstEntry = await cache.get(first);
  await cache.get(second); // 4,000 bytes: within the budget
  t.equal(source.loads, 2);
  await json(firstEntry).encoded('gzip'); // + ~2,000: over it
  await cache.get(first);
  t.equal(source.loads, 2, 'the entry that grew is kept, though it is the oldest');
  await cache.get(second);
  t.equal(source.loads, 3, 'the other entry was dropped to make room');
});

t.test('each format is written once from the one document, and counts against the budget', async (t) => {
  const source = countingSource();
  const cache = createDiscoveryCache(source, { ...FORMATS, maxBytes: 30 });
  const first = await cache.get(everything);
  const geojson = first.representation('geojson');
  t.equal(geojson.body.toString(), 'geo:key_all@1');
  t.equal(first.representation('geojson'), geojson, 'written once');
  t.not(geojson.etag(undefined), json(first).etag(undefined), 'a tag of its own');
  t.equal(first.document, 'key_all@1', 'the document, for a request that selects part of it');
  t.equal(source.loads, 1, 'no second read for the second format');
  // 9 + 13 bytes: within 30. Another key's 16 more are not.
  const other: Client = { keyId: 'key_bbbbbbbbbb', allTubes: false, grants: new Set([3]) };
  await cache.get(other);
  await cache.get(everything);
  t.equal(source.loads, 3, 'the entry with both formats was dropped to make room');
});

/**
 * Discovery documents (the wells of a key), read once per set of grants and kept with the registry
 * version they were read at (sql/003_registry_version.sql), with each format's body written (and
 * compressed) the first time it is asked for. The current version is read at most once per
 * VERSION_FRESH_MS by a process, whatever the number of requests (one tiny read, shared); a request
 * whose grants have a document at least that recent gets the cached bytes without touching the database.
 *
 * Why it stays correct:
 * - after an import or any change of wells or tubes (locations and elevations included): the change
 *   raises the version in its own transaction, so every request that starts VERSION_FRESH_MS after the
 *   commit, on every replica, sees a new version and reads the document again, every format with it;
 * - after a grant change or a revocation: grants come with the client from the key cache, as fresh as
 *   it keeps them (src/keys/clients.ts); a new set of grants is another cache entry.
 * Entries are dropped oldest first beyond a byte budget, so many distinct keys cannot grow the process.
 */

import { createHash } from 'node:crypto';
import { API_VERSION } from '../../contract.js';
import { BudgetCache } from '../../http/budgetCache.js';
import { type Coding, compressBody } from '../../http/compression.js';
import { entityTag } from '../../http/conditional.js';
import { type Client, grantsCacheKey } from '../../keys/clients.js';

/** One body of a discovery document: its bytes, its tag and its compressed forms. */
export interface Representation {
  body: Buffer;
  /**
   * The strong tag of the body in `coding` (undefined: identity). Made from the body's own hash, so it
   * changes exactly when the bytes do: a registry change the key cannot see, or a grant that adds
   * nothing, keeps it. Hashed once per body.
   */
  etag(coding: Coding | undefined): string;
  /**
   * The body in `coding`, compressed (off the event loop) the first time it is asked for; requests
   * that ask meanwhile wait for the same compression. A promise only until it is done.
   */
  encoded(coding: Coding): Buffer | Promise<Buffer>;
}

export interface CachedDiscovery<D, F extends string> {
  /** What the bodies are written from: for a request that selects part of it (bbox). */
  document: D;
  /** When the registry last changed, as of the document's snapshot (sql/004). */
  changedAt: Date;
  /**
   * The primary's clock up to which the document's source held every change
   * (readReplicas/readSources.ts): what an If-Modified-Since may be answered 304 for.
   */
  heldThroughMs: number | undefined;
  /** The whole document in `format`, written the first time it is asked for and kept with it. */
  representation(format: F): Representation;
}

export interface DiscoverySource<D> {
  /**
   * The registry version now: a bigint as text, raised by every change, after the history it counts on
   * and a slash (`<history>/<n>`; src/db/walHistory.ts), since a restored database counts again.
   */
  currentVersion(): Promise<string>;
  /**
   * The client's discovery document and the version of the snapshot it was read in; `signal` says the
   * client has gone.
   */
  load(
    client: Client,
    signal?: AbortSignal,
  ): Promise<{ version: string; changedAt: Date; heldThroughMs?: number | undefined; document: D }>;
}

export interface DiscoveryCacheOptions<D, F extends string> {
  /** The formats, the first written as soon as a document is read (its size stands for the document's). */
  formats: readonly [F, ...F[]];
  write(document: D, format: F): Buffer;
  maxBytes?: number;
}

/**
 * How long one reading of the registry version answers for every request. Without it each request
 * would cost a database round trip, a large part of a cached discovery request
 * (docs/decisions/0013-per-request-costs.md); with it a change still shows well inside the time a
 * revocation may take (KEY_CACHE_SECONDS).
 */
export const VERSION_FRESH_MS = 1000;

/** Below this, compression saves too little to be worth a header (as @fastify/compress's threshold). */
const COMPRESS_FROM_BYTES = 1024;

/**
 * A body with its tag and compressed forms. `sent`: a cached body is compressed at the slow levels, one
 * made for a single response at the quick ones. `grown` hears of each compressed form when it is done.
 */
export function representationOf(
  body: Buffer,
  format: string,
  sent: 'many times' | 'once',
  grown?: (bytes: number) => void,
): Representation {
  const encodings: Partial<Record<Coding, Buffer | Promise<Buffer>>> = {};
  const digest = createHash('sha256').update(body).digest('base64url');
  const tags = new Map<Coding | undefined, string>();
  return {
    body,
    etag(coding) {
      let tag = tags.get(coding);
      if (tag === undefined) {
        tag = entityTag([API_VERSION, 'discovery', format, digest, coding ?? 'identity']);
        tags.set(coding, tag);
      }
      return tag;
    },
    encoded(coding) {
      const done = encodings[coding];
      if (done) return done;
      const encoded = compressBody(body, coding, sent);
      encodings[coding] = encoded;
      encoded.then(
        (compressed) => {
          // From now on answered without a promise.
          encodings[coding] = compressed;
          grown?.(compressed.length);
        },
        () => {
          // Tried again by the next request that asks (this one fails with the error).
          delete encodings[coding];
        },
      );
      return encoded;
    },
  };
}

/** A registry version read: the history it counts on, and the count. */
interface Version {
  history: string;
  count: bigint;
}

const versionOf = (text: string): Version => {
  const slash = text.lastIndexOf('/');
  return { history: text.slice(0, slash + 1), count: BigInt(text.slice(slash + 1)) };
};

interface Entry<D, F extends string> extends CachedDiscovery<D, F> {
  version: Version;
}

export function createDiscoveryCache<D, F extends string>(
  source: DiscoverySource<D>,
  options: DiscoveryCacheOptions<D, F>,
) {
  const entries = new BudgetCache<Entry<D, F>>(options.maxBytes ?? 64 * 1024 * 1024);

  function entryFor(
    key: string,
    version: Version,
    changedAt: Date,
    heldThroughMs: number | undefined,
    document: D,
  ): Entry<D, F> {
    const written = new Map<F, Representation>();
    /** Bytes added to an entry after it was kept count against the budget while it is kept. */
    const grown = (bytes: number) => entries.grow(key, entry, bytes);
    const entry: Entry<D, F> = {
      version,
      document,
      changedAt,
      heldThroughMs,
      representation(format) {
        let representation = written.get(format);
        if (representation === undefined) {
          representation = representationOf(options.write(document, format), format, 'many times', grown);
          written.set(format, representation);
          grown(representation.body.length);
        }
        return representation;
      },
    };
    entries.set(key, entry, 0);
    entry.representation(options.formats[0]);
    return entry;
  }

  let versionRead: { at: number; pending: Promise<Version>; version?: Version } | undefined;
  /** The version as read at most VERSION_FRESH_MS ago; a promise while that read is in flight. */
  function recentVersion(): Version | Promise<Version> {
    const now = performance.now();
    if (!versionRead || now - versionRead.at >= VERSION_FRESH_MS) {
      const read: NonNullable<typeof versionRead> = {
        at: now,
        pending: source.currentVersion().then(versionOf),
      };
      versionRead = read;
      read.pending.then(
        (version) => {
          read.version = version;
        },
        // A failed read is not kept: the next request tries again.
        () => {
          if (versionRead === read) versionRead = undefined;
        },
      );
    }
    return versionRead.version ?? versionRead.pending;
  }

  async function load(key: string, client: Client, clientGone?: () => AbortSignal): Promise<Entry<D, F>> {
    const { version, changedAt, heldThroughMs, document } = await source.load(client, clientGone?.());
    // Without a source's word (tests' sources), a body holds what the database held: everything.
    const entry = entryFor(
      key,
      versionOf(version),
      changedAt,
      heldThroughMs ?? Number.POSITIVE_INFINITY,
      document,
    );
    return entry;
  }

  // At least as new: a body rebuilt after the shared read may carry a later version than it.
  const isCurrent = ({ version: kept }: Entry<D, F>, read: Version): boolean =>
    kept.history === read.history && kept.count >= read.count;

  return {
    /**
     * The client's document. A fresh cached one (nearly every request) is answered at once, without a
     * promise or a turn of the event loop; a promise when the version or the document must be read.
     * `clientGone` makes the signal for a wait at the gate, only if a load needs one.
     */
    get(
      client: Client,
      clientGone?: () => AbortSignal,
    ): CachedDiscovery<D, F> | Promise<CachedDiscovery<D, F>> {
      const key = grantsCacheKey(client);
      const cached = entries.get(key);
      // Nothing to compare a version with: the load reads the body with its own.
      if (!cached) return load(key, client, clientGone);
      const version = recentVersion();
      if (!(version instanceof Promise)) {
        return isCurrent(cached, version) ? cached : load(key, client, clientGone);
      }
      return version.then((read) => (isCurrent(cached, read) ? cached : load(key, client, clientGone)));
    },
  };
}

/** Whether a body is worth compressing at all. */
export const worthCompressing = ({ body }: Representation): boolean => body.length >= COMPRESS_FROM_BYTES;

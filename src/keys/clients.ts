/**
 * X-API-Key → the client it belongs to: key id, all-tubes flag and granted tubes. A short in-process
 * cache spares each request a database round trip; its lifetime (KEY_CACHE_SECONDS, at most 10) bounds
 * how long a revoked key keeps working on any replica.
 *
 * No secret is ever compared here, so nothing needs a constant-time comparison: the presented key is
 * hashed (SHA-256) and the digest is looked up, in the cache and in the unique index on key_hash. How
 * long a lookup takes can at most tell an attacker how many leading bytes of some stored digest match
 * a digest they computed, which brings them no closer to a key with that digest (preimage resistance).
 * The cache is keyed by the digest too, so the process never holds a presented key longer than a request.
 */
import type { Queryable, Sql } from '../db/connect.js';
import type { WithConnection } from '../db/connectionGate.js';
import { isDatabaseUnavailable } from '../db/errorCodes.js';
import { retryIfConnectionLost } from '../db/retry.js';
import { apiKeyDigest, digestBytes, looksLikeApiKey } from './format.js';
import { findClientByKeyHash } from './sql.js';

export interface Client {
  /** The non-secret name of the key, for logs and limits. */
  keyId: string;
  allTubes: boolean;
  /** Internal ids of the tubes granted one by one. */
  grants: ReadonlySet<number>;
  /** When what the key may read last changed; part of discovery's Last-Modified. */
  accessChangedAt?: Date;
}

/** A key that may read no tube at all: both data endpoints answer 403. */
export const readsNothing = (client: Client): boolean => !client.allTubes && client.grants.size === 0;

export const mayRead = (client: Client, tubeId: number): boolean =>
  client.allTubes || client.grants.has(tubeId);

const grantsCacheKeys = new WeakMap<Client, string>();

/**
 * What a key may read, as a key of a cache: `*` for every tube, otherwise the sorted tube ids. Made once
 * per client object (clients are cached with their key).
 */
export function grantsCacheKey(client: Client): string {
  let key = grantsCacheKeys.get(client);
  if (key === undefined) {
    key = client.allTubes ? '*' : [...client.grants].sort((a, b) => a - b).join(',');
    grantsCacheKeys.set(client, key);
  }
  return key;
}

export interface ClientResolver {
  /**
   * The client of a presented key, or undefined for an unknown, revoked or malformed one. Answered at
   * once when the cache knows (nearly every request: no promise to wait for), otherwise a promise.
   */
  resolve(presentedKey: string): Client | undefined | Promise<Client | undefined>;
}

export interface ClientCacheOptions {
  /** How long a found key is trusted without asking the database again. 0: not cached. */
  cacheSeconds: number;
  /**
   * How long "no such key" is remembered. Short: it only has to absorb a burst of retries with a bad
   * key, and a key created moments ago should work at once.
   */
  negativeCacheSeconds?: number;
  /** Bound on remembered digests, so a flood of made-up keys cannot grow the process. */
  maxEntries?: number;
  /** Told of each lookup whether the cache answered it (for metrics). */
  onLookup?: (cacheHit: boolean) => void;
  /**
   * Runs each database lookup (the API's connection gate, so a full pool makes it wait a bounded time).
   * No client's signal: one lookup serves every concurrent request with the same key.
   */
  withConnection?: WithConnection;
  /**
   * Runs a lookup where keys are looked up while `sql` (the primary) does not take queries: a usable
   * read replica, through its gate. A replica holds every revocation it has replayed, so a key revoked
   * before the primary went away stays refused, and keys keep working through a switch-over.
   */
  whilePrimaryUnavailable?: <T>(lookup: (sql: Queryable) => Promise<T>) => Promise<T>;
}

interface Entry {
  expiresAt: number;
  client: Promise<Client | undefined>;
  /** The answer, once the lookup has given it. */
  found?: { client: Client | undefined };
}

export function createClientResolver(sql: Sql, options: ClientCacheOptions): ClientResolver {
  const ttl = options.cacheSeconds * 1000;
  const negativeTtl = Math.min(ttl, (options.negativeCacheSeconds ?? 1) * 1000);
  const maxEntries = options.maxEntries ?? 10_000;
  const withConnection: WithConnection = options.withConnection ?? ((work) => work());
  const cache = new Map<string, Entry>();

  const fallback = options.whilePrimaryUnavailable;

  async function find(keyHash: Buffer) {
    try {
      return await withConnection(() => retryIfConnectionLost(() => findClientByKeyHash(sql, keyHash)));
    } catch (error) {
      if (!fallback || !isDatabaseUnavailable(error)) throw error;
      return fallback((replica) => findClientByKeyHash(replica, keyHash));
    }
  }

  async function load(digest: string): Promise<Client | undefined> {
    const row = await find(digestBytes(digest));
    return (
      row && {
        keyId: row.keyId,
        allTubes: row.allTubes,
        grants: new Set(row.tubeIds),
        accessChangedAt: row.accessChangedAt,
      }
    );
  }

  function remember(digest: string, entry: Entry): void {
    cache.delete(digest);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(digest, entry);
  }

  return {
    resolve(presentedKey) {
      if (!looksLikeApiKey(presentedKey)) return undefined;
      const digest = apiKeyDigest(presentedKey);
      if (ttl === 0) {
        options.onLookup?.(false);
        return load(digest);
      }
      const now = performance.now();
      const cached = cache.get(digest);
      const hit = cached !== undefined && cached.expiresAt > now;
      options.onLookup?.(hit);
      if (hit) return cached.found ? cached.found.client : cached.client;
      // Concurrent requests with the same key share one query (the entry holds the promise).
      const entry: Entry = { expiresAt: now + ttl, client: load(digest) };
      remember(digest, entry);
      return entry.client.then(
        (client) => {
          entry.found = { client };
          if (!client) entry.expiresAt = now + negativeTtl;
          return client;
        },
        (error: unknown) => {
          if (cache.get(digest) === entry) cache.delete(digest);
          throw error;
        },
      );
    },
  };
}

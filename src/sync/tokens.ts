/**
 * Sync tokens as the network endpoint uses them: the token of the response's snapshot,
 * the reading of a `changedSince`, the 410, and the select of what changed since a token. One
 * dependency of the route, so that it knows nothing of how a token is made, and the secret is read
 * from the database at the first use rather than when the app is built.
 */
import type { Queryable } from '../db/connect.js';
import type { ReadSources } from '../db/readReplicas/readSources.js';
import type { Client } from '../keys/clients.js';
import { type CurrentPoint, currentSyncPoint, deltaSelect, loadSyncSecret, syncGone } from './sql.js';
import { issueSyncToken, readSyncToken, type SyncPoint } from './token.js';

export interface SyncTokens {
  /** Where the response stands: `tx` is its repeatable-read transaction. */
  current(tx: Queryable, client: Client): Promise<CurrentPoint>;
  /** The token of `point`, bound to the key; `tx` is the response's transaction. */
  issue(tx: Queryable, point: SyncPoint, keyId: string): Promise<string>;
  /** What a `changedSince` stands for; undefined when this service did not issue it to this key (400). */
  read(text: string, keyId: string): Promise<SyncPoint | undefined>;
  /** Whether the changes since `since` can no longer be told as measurements (410). */
  gone: typeof syncGone;
  /**
   * The select of the measurements changed since a token (the columns of the series' row source, by tube
   * then time), or undefined when they cannot be told as rows the client can apply (410).
   */
  delta: typeof deltaSelect;
}

/**
 * The tokens of the database `reads` read from (its replicas replicate the secret). Its secret is read
 * once: on the connection of a response being read, or through a source's gate outside one (a request
 * must not wait for a second connection while it holds one: with a pool of one, it would wait for itself).
 */
export function syncTokens(reads: ReadSources): SyncTokens {
  let secret: Promise<Buffer> | undefined;
  const secretOf = (read: () => Promise<Buffer>) => {
    if (!secret) {
      const reading = read();
      // A failed read is tried again by the next request.
      reading.catch(() => {
        if (secret === reading) secret = undefined;
      });
      secret = reading;
    }
    return secret;
  };
  return {
    current: currentSyncPoint,
    issue: async (tx, point, keyId) => issueSyncToken(point, keyId, await secretOf(() => loadSyncSecret(tx))),
    async read(text, keyId) {
      const key = await secretOf(() =>
        reads.read(({ sql, gate }) => gate.run(() => loadSyncSecret(sql), undefined, 'sync')),
      );
      return readSyncToken(text, keyId, key);
    },
    gone: syncGone,
    delta: deltaSelect,
  };
}

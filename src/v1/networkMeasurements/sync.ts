/**
 * What the network endpoint needs of sync tokens (src/v1/sync/ once it is there), as one dependency:
 * the token of the response's snapshot, the reading of a `changedSince`, the 410, and the select of the
 * measurements changed since a token. The route knows nothing of how a token is made.
 */
import type { Queryable } from '../../db/connect.js';
import type { Client } from '../../keys/clients.js';
import type { Bucketing } from '../measurements/sql.js';

export interface ChangedMeasurementsRequest<Point> {
  /** Internal tube ids; a row's `tube` is its position here. */
  tubeIds: readonly number[];
  /** RFC 3339 UTC forms of the interval. */
  from: string;
  to: string;
  since: Point;
  aggregate?: Bucketing | undefined;
}

export interface SyncTokens<Point = unknown> {
  /** Where the response stands: `tx` is its repeatable-read transaction. */
  current(tx: Queryable, client: Client): Promise<Point>;
  /** The token of `point`, bound to the key. */
  issue(point: Point, keyId: string): string;
  /** What a `changedSince` stands for, or undefined when this service did not issue it to this key (400). */
  read(text: string, keyId: string): Point | undefined;
  /** Whether the changes since `since` can no longer be told as measurements (410). */
  gone(tx: Queryable, since: Point, now: Point): Promise<boolean>;
  /**
   * The select of the measurements changed since `since`: the columns of the series' row source
   * (measurements/sql.ts), ordered by tube then time, as SQL text (binary COPY takes no parameters).
   */
  changedSelect(tx: Queryable, request: ChangedMeasurementsRequest<Point>): string | Promise<string>;
}

/**
 * The stand-in until src/v1/sync/ is wired in (plugin.ts): a token that names the snapshot, and no
 * token read back, so every `changedSince` is a 400. Replace it, do not extend it.
 */
export const snapshotOnlyTokens: SyncTokens<string> = {
  async current(tx) {
    const [row] = await tx<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`;
    return row!.snapshot;
  },
  issue: (point) => Buffer.from(point).toString('base64url'),
  read: () => undefined,
  gone: async () => false,
  changedSelect() {
    throw new Error('no sync token is read back before src/v1/sync/ is wired in');
  },
};

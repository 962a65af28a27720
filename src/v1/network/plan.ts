/**
 * What a network response holds, read in its snapshot before any measurement: its tubes, its sync
 * token and its validators.
 */
import type { Queryable } from '../../db/connect.js';
import { type ReadSource, SourceBehind } from '../../db/readReplicas/readSources.js';
import { placeOnHistory } from '../../db/walHistory.js';
import type { Validators } from '../../http/conditional.js';
import type { Client } from '../../keys/clients.js';
import { type SyncPoint, seesAllOf, standbyPoint } from '../../sync/token.js';
import type { SyncTokens } from '../../sync/tokens.js';
import type { Bbox } from '../bbox.js';
import { selectTubesInBox, type TubeInView } from '../tubesInView.js';
import { changesGone } from './refusals.js';
import { type NetworkTagInputs, networkValidators } from './validators.js';

export interface NetworkSelection {
  /** The response's tubes, in discovery's order. */
  tubes: TubeInView[];
  /** The token of the snapshot the selection was read in. */
  syncToken: string;
  validators: Validators;
}

export interface SelectionRequest {
  client: Client;
  /** `tubes` as sent, or undefined for every tube the key may read. */
  listed: readonly string[] | undefined;
  /** `bbox`: only the tubes of the wells inside it. */
  bbox: Bbox | undefined;
  /** What `changedSince` stands for, when given. */
  since: SyncPoint | undefined;
  tagInputs: Omit<NetworkTagInputs, 'tubes'>;
}

/**
 * Access, in the response's snapshot: the tubes, a 404 naming the first listed identifier the key may
 * not read (malformed, unknown and hidden alike), then the 410 of a token whose changes are gone. On a
 * read replica the snapshot is what a standby can vouch for (standbyPoint), and a replica that has not
 * replayed all the token's snapshot saw is no answer at all (SourceBehind): a delta from it would start
 * before the token, and its 410 would be its lag's, not the token's.
 */
export async function selectNetwork(
  tx: Queryable,
  sync: SyncTokens,
  { client, listed, bbox, since, tagInputs }: SelectionRequest,
  source: Pick<ReadSource, 'replica'>,
): Promise<NetworkSelection> {
  const { tubes, candidates, locationsChangedAt } = await selectTubesInBox(tx, client, listed, bbox);
  const read = await sync.current(tx, client);
  const now = source.replica ? standbyPoint(read) : read;
  if (
    since !== undefined &&
    source.replica &&
    (!seesAllOf(now, since) || (since.place && placeOnHistory(now.history, since.place) === 'later'))
  ) {
    throw new SourceBehind(async (primary) => {
      if (!seesAllOf(await sync.current(primary, client), since)) throw changesGone();
    });
  }
  if (since !== undefined && (await sync.gone(tx, since, now))) throw changesGone();
  if (since !== undefined && bbox !== undefined && (await wellsWrittenSince(tx, candidates, since))) {
    throw changesGone();
  }
  return {
    tubes,
    syncToken: await sync.issue(tx, now, client.keyId),
    validators: networkValidators({ tubes, ...tagInputs }, client, locationsChangedAt),
  };
}

/**
 * Whether a well of the candidates was written after the token's snapshot: then its location may have
 * taken it into the box (its earlier measurements are not in the client's copy, and a delta would not
 * bring them) or out of it (the copy keeps what the response no longer holds), and the delta cannot be
 * told as measurements. Without a box no location changes what a response holds, and none is a 410.
 * Read from each well row's own xmin, widened to an xid8 in the epoch of the snapshot's xmax (an xmin
 * that reads above xmax's low half is from the epoch before): a row frozen long ago may read as newer
 * than it is, which costs a needless 410, never a missed change.
 */
async function wellsWrittenSince(
  tx: Queryable,
  candidates: readonly TubeInView[],
  since: SyncPoint,
): Promise<boolean> {
  const wellIds = [...new Set(candidates.map((tube) => tube.wellId))];
  if (wellIds.length === 0) return false;
  const snapshot = `${since.xmin}:${since.xmax}:${since.xip.join(',')}`;
  const [row] = await tx<{ written: boolean }[]>`
    select exists (
      select from wells w,
        (select x >> 32 as epoch, x & 4294967295 as low
         from (select pg_snapshot_xmax(pg_current_snapshot())::text::bigint as x) now) e
      where w.id = any(${wellIds}::int[])
        and not pg_visible_in_snapshot(
          (((e.epoch - case when w.xmin::text::bigint > e.low then 1 else 0 end) << 32)
            + w.xmin::text::bigint)::text::xid8,
          ${snapshot}::pg_snapshot)
    ) as written`;
  return row!.written;
}

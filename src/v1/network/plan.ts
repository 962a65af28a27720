/**
 * What a network response holds, read in its snapshot before any measurement: its tubes, its sync
 * token and its validators.
 */
import type { Queryable } from '../../db/connect.js';
import { type ReadSource, SourceBehind } from '../../db/readReplicas/readSources.js';
import type { Validators } from '../../http/conditional.js';
import type { Client } from '../../keys/clients.js';
import { type SyncPoint, seesAllOf, standbyPoint } from '../../sync/token.js';
import type { SyncTokens } from '../../sync/tokens.js';
import { selectTubes, type TubeInView } from '../tubesInView.js';
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
  { client, listed, since, tagInputs }: SelectionRequest,
  source: Pick<ReadSource, 'replica'>,
): Promise<NetworkSelection> {
  const tubes = await selectTubes(tx, client, listed);
  const read = await sync.current(tx, client);
  const now = source.replica ? standbyPoint(read) : read;
  if (since !== undefined && source.replica && !seesAllOf(now, since)) {
    throw new SourceBehind(async (primary) => {
      if (!seesAllOf(await sync.current(primary, client), since)) throw changesGone();
    });
  }
  if (since !== undefined && (await sync.gone(tx, since, now))) throw changesGone();
  return {
    tubes,
    syncToken: await sync.issue(tx, now, client.keyId),
    validators: networkValidators({ tubes, ...tagInputs }, client),
  };
}

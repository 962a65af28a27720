/** The validators of a network response: from its tube list and parameters, no measurement read. */

import type { Aggregate } from '../../contract.js';
import { API_VERSION } from '../../contract.js';
import type { StatusRequest } from '../../engine/read/selects.js';
import type { Coding } from '../../http/compression.js';
import { entityTag, type Validators } from '../../http/conditional.js';
import type { Client } from '../../keys/clients.js';
import { statusTagParts } from '../measurementsQuery.js';
import type { TubeInView } from '../tubesInView.js';

export interface NetworkTagInputs extends StatusRequest {
  /** The response's tubes, in its order: their identifiers and series versions are its view. */
  tubes: readonly TubeInView[];
  /** RFC 3339 UTC forms of the interval. */
  from: string;
  to: string;
  coding: Coding | undefined;
  aggregate: Aggregate | undefined;
  /** The format's name. */
  variant: string;
  /** The token the response is a delta since, undefined for everything. */
  changedSince: string | undefined;
}

/**
 * A weak tag: the body holds the sync token of its snapshot, and every snapshot has a token of its
 * own, so two responses with the same measurements differ in those bytes. A strong tag would promise
 * byte-identical bodies; the weak one promises what holds: the same measurements of the same tubes.
 * Each tube's series version (sql/004) moves with every change of its rows or registry fields, and
 * the list's order with the wells' names.
 */
export function networkTag(inputs: NetworkTagInputs): string {
  const { tubes, from, to, coding, aggregate, variant, changedSince } = inputs;
  const strong = entityTag([
    API_VERSION,
    'network',
    tubes.map((tube) => `${tube.identifier}:${tube.seriesVersion}`).join(','),
    from,
    to,
    coding ?? 'identity',
    aggregate ?? 'raw',
    variant,
    changedSince ?? 'everything',
    ...statusTagParts(inputs),
  ]);
  return `W/${strong}`;
}

/**
 * The latest change of what the response derives from: its tubes, their wells, the key's grants, and
 * with a box the locations that chose the tubes.
 */
function lastChange(
  tubes: readonly TubeInView[],
  client: Client,
  locationsChangedAt: Date | undefined,
): Date {
  let latest = client.accessChangedAt ?? new Date(0);
  if (locationsChangedAt !== undefined && locationsChangedAt > latest) latest = locationsChangedAt;
  for (const { seriesChangedAt, wellChangedAt } of tubes) {
    if (seriesChangedAt > latest) latest = seriesChangedAt;
    if (wellChangedAt > latest) latest = wellChangedAt;
  }
  return latest;
}

export function networkValidators(
  inputs: NetworkTagInputs,
  client: Client,
  locationsChangedAt?: Date,
): Validators {
  return { etag: networkTag(inputs), lastModified: lastChange(inputs.tubes, client, locationsChangedAt) };
}

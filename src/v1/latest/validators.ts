/** The validators of latest: from its tube list and parameters, no measurement read. */
import { API_VERSION } from '../../contract.js';
import type { Coding } from '../../http/compression.js';
import { entityTag, type Validators } from '../../http/conditional.js';
import type { Client } from '../../keys/clients.js';
import type { TubeInView } from '../tubesInView.js';

export interface LatestTagInputs {
  /** The response's tubes, in its order. */
  tubes: readonly TubeInView[];
  /** The status codes that pass, undefined for every status. */
  statuses: readonly number[] | undefined;
  withStatus: boolean;
  coding: Coding | undefined;
  /** The format's name. */
  variant: string;
}

/**
 * A strong tag: the body holds nothing but what it derives from, so equal inputs are equal bytes (a
 * box is in it as the tubes it selects, whose locations are in it too). Each
 * tube's series version moves with every change of its measurements (a value, a status, a removal) and
 * of its identifier, number, unit and datum; its well's name and location are in the body too (GeoJSON)
 * and move the list's order (the name).
 */
export function latestTag({ tubes, statuses, withStatus, coding, variant }: LatestTagInputs): string {
  return entityTag([
    API_VERSION,
    'latest',
    tubes
      .map((tube) => `${tube.identifier}:${tube.seriesVersion}:${tube.longitude}:${tube.latitude}`)
      .join(','),
    tubes.map((tube) => tube.wellName).join('\n'),
    statuses?.join(',') ?? 'every status',
    withStatus ? 'status' : 'no status',
    coding ?? 'identity',
    variant,
  ]);
}

/**
 * The latest change of what the response derives from: its tubes, their wells, the key's grants and,
 * with a box, the locations of every well the box chose among (one that left it took its tubes along).
 */
function lastChange(
  tubes: readonly TubeInView[],
  client: Client,
  locationsChangedAt: Date | undefined,
): Date {
  let latest = client.accessChangedAt ?? new Date(0);
  if (locationsChangedAt !== undefined && locationsChangedAt > latest) latest = locationsChangedAt;
  for (const { seriesChangedAt, wellChangedAt, locationChangedAt } of tubes) {
    if (seriesChangedAt > latest) latest = seriesChangedAt;
    if (wellChangedAt > latest) latest = wellChangedAt;
    if (locationChangedAt && locationChangedAt > latest) latest = locationChangedAt;
  }
  return latest;
}

export function latestValidators(
  inputs: LatestTagInputs,
  client: Client,
  locationsChangedAt: Date | undefined,
): Validators {
  return { etag: latestTag(inputs), lastModified: lastChange(inputs.tubes, client, locationsChangedAt) };
}

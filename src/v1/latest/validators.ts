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
 * A strong tag: the body holds nothing but what it derives from, so equal inputs are equal bytes. Each
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

/** The latest change of what the response derives from: its tubes, their wells, and the key's grants. */
function lastChange(tubes: readonly TubeInView[], client: Client): Date {
  let latest = client.accessChangedAt ?? new Date(0);
  for (const { seriesChangedAt, wellChangedAt, locationChangedAt } of tubes) {
    if (seriesChangedAt > latest) latest = seriesChangedAt;
    if (wellChangedAt > latest) latest = wellChangedAt;
    if (locationChangedAt && locationChangedAt > latest) latest = locationChangedAt;
  }
  return latest;
}

export function latestValidators(inputs: LatestTagInputs, client: Client): Validators {
  return { etag: latestTag(inputs), lastModified: lastChange(inputs.tubes, client) };
}

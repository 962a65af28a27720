/** The validators of latest: from its view, its tubes' series versions and its parameters, no row read. */
import { API_VERSION } from '../../contract.js';
import type { Coding } from '../../http/compression.js';
import { entityTag, type Validators } from '../../http/conditional.js';
import type { Client } from '../../keys/clients.js';
import type { SeriesState } from '../keyViews.js';
import type { TubeInView } from '../tubesInView.js';

export interface LatestTagInputs {
  /** The registry version of the view the tubes are of: their wells' names and locations, their order. */
  registryVersion: string;
  /** The response's tubes, in its order. */
  tubes: readonly TubeInView[];
  series: SeriesState;
  /** The status codes that pass, undefined for every status. */
  statuses: readonly number[] | undefined;
  withStatus: boolean;
  coding: Coding | undefined;
  /** The format's name. */
  variant: string;
}

/** A strong tag: the body holds nothing but what it derives from, so equal inputs are equal bytes. */
export function latestTag(inputs: LatestTagInputs): string {
  const { registryVersion, tubes, series, statuses, withStatus, coding, variant } = inputs;
  return entityTag([
    API_VERSION,
    'latest',
    registryVersion,
    tubes.map((tube) => tube.id).join(','),
    series.versions,
    statuses?.join(',') ?? 'every status',
    withStatus ? 'status' : 'no status',
    coding ?? 'identity',
    variant,
  ]);
}

/**
 * The latest change of what the response derives from: its tubes' series, their wells (name and
 * location), the key's grants and, with a box, the locations of every well the box chose among (one
 * that left it took its tubes along).
 */
function lastChange(inputs: LatestTagInputs, client: Client, locationsChangedAt: Date | undefined): Date {
  let latest = client.accessChangedAt ?? new Date(0);
  if (locationsChangedAt !== undefined && locationsChangedAt > latest) latest = locationsChangedAt;
  const { changedAt } = inputs.series;
  if (changedAt !== null && changedAt > latest) latest = changedAt;
  for (const { wellChangedAt, locationChangedAt } of inputs.tubes) {
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
  return { etag: latestTag(inputs), lastModified: lastChange(inputs, client, locationsChangedAt) };
}

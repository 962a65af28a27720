/** The validators of a series, from the tube's row alone: no measurement is read. */

import type { Aggregate } from '../../contract.js';
import { API_VERSION } from '../../contract.js';
import type { StatusRequest } from '../../engine/read/selects.js';
import type { Coding } from '../../http/compression.js';
import { entityTag, type Validators } from '../../http/conditional.js';
import { statusTagParts } from '../measurementsQuery.js';

export interface SeriesTagInputs extends StatusRequest {
  /** Canonical (lower-case) tube identifier. */
  tubeIdentifier: string;
  /** The tube's series version (sql/004): raised by every change of its rows or registry fields. */
  seriesVersion: string;
  /** RFC 3339 UTC forms of the interval, as the head states them. */
  from: string;
  to: string;
  /** The content coding of the response, undefined for identity. */
  coding: Coding | undefined;
  /** The bucket length, undefined for every measurement. */
  aggregate: Aggregate | undefined;
  /** The format's media type. */
  variant: string;
}

/** The strong tag of one representation of a series. */
export function seriesTag(inputs: SeriesTagInputs): string {
  const { tubeIdentifier, seriesVersion, from, to, coding, aggregate, variant } = inputs;
  return entityTag([
    API_VERSION,
    'series',
    tubeIdentifier,
    seriesVersion,
    from,
    to,
    coding ?? 'identity',
    aggregate ?? 'raw',
    variant,
    ...statusTagParts(inputs),
  ]);
}

export function seriesValidators(inputs: SeriesTagInputs, seriesChangedAt: Date): Validators {
  return { etag: seriesTag(inputs), lastModified: seriesChangedAt };
}

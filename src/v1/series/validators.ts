/** The validators of a series (v1.1.md, "Conditional requests"), from the tube's row alone. */

import { API_VERSION } from '../../contract.js';
import type { Coding } from '../../http/compression.js';
import { representationTag, type Validators } from '../../http/conditional.js';
import type { Aggregate } from './query.js';

export interface SeriesRepresentationInputs {
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
  /** The format: the representation's media type. */
  variant: string;
}

/** The strong tag of one representation of a series. */
export function seriesTag(inputs: SeriesRepresentationInputs): string {
  const { tubeIdentifier, seriesVersion, from, to, coding, aggregate, variant } = inputs;
  return representationTag([
    API_VERSION,
    'series',
    tubeIdentifier,
    seriesVersion,
    from,
    to,
    coding ?? 'identity',
    aggregate ?? 'raw',
    variant,
  ]);
}

export function seriesValidators(inputs: SeriesRepresentationInputs, seriesChangedAt: Date): Validators {
  return { etag: seriesTag(inputs), lastModified: seriesChangedAt };
}

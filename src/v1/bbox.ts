/**
 * The `bbox` parameter of every endpoint that selects wells by their location (discovery, the network,
 * the latest): `minLon,minLat,maxLon,maxLat` in WGS 84 decimal degrees, the order of OGC API -
 * Features. A well lies inside when its location does, edges included; a well without a location never
 * does. One parser and one test of "inside", so that every endpoint selects alike.
 */
import { z } from 'zod';
import { GIVEN_TWICE, parsedBy } from './measurementsQuery.js';

export interface Bbox {
  minLongitude: number;
  minLatitude: number;
  maxLongitude: number;
  maxLatitude: number;
}

/** A decimal number as a client writes one in a URL: no spaces, no hex, no `Infinity`. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

const FORM = 'four comma-separated numbers minLon,minLat,maxLon,maxLat';
const NAMES = ['minLon', 'minLat', 'maxLon', 'maxLat'] as const;
/** Longitudes within ±180, latitudes within ±90. */
const BOUNDS = [180, 90, 180, 90] as const;

/** The box `text` stands for, or why it is none. */
export function parseBbox(text: string): { ok: true; bbox: Bbox } | { ok: false; reason: string } {
  const items = text.split(',');
  if (items.length !== 4) return { ok: false, reason: `holds ${items.length} items: give ${FORM}` };
  const numbers: number[] = [];
  for (const [i, item] of items.entries()) {
    const value = Number(item);
    if (!DECIMAL.test(item) || !Number.isFinite(value)) {
      // A '+' left unencoded in a URL arrives as a space.
      const hint = item.startsWith(' ') ? ' (write a + sign as %2B)' : '';
      return {
        ok: false,
        reason: `${NAMES[i]} ${JSON.stringify(item)} is not a finite number${hint}: give ${FORM}`,
      };
    }
    const bound = BOUNDS[i]!;
    if (Math.abs(value) > bound) {
      return { ok: false, reason: `${NAMES[i]} ${item} is outside [-${bound}, ${bound}]` };
    }
    numbers.push(value);
  }
  const [minLongitude, minLatitude, maxLongitude, maxLatitude] = numbers as [number, number, number, number];
  if (minLongitude > maxLongitude) {
    return { ok: false, reason: `minLon ${items[0]} is greater than maxLon ${items[2]}` };
  }
  if (minLatitude > maxLatitude) {
    return { ok: false, reason: `minLat ${items[1]} is greater than maxLat ${items[3]}` };
  }
  return { ok: true, bbox: { minLongitude, minLatitude, maxLongitude, maxLatitude } };
}

/** Whether a location lies inside the box, edges included; an unknown location (null) never does. */
export function containsLocation(bbox: Bbox, longitude: number | null, latitude: number | null): boolean {
  return (
    longitude !== null &&
    latitude !== null &&
    longitude >= bbox.minLongitude &&
    longitude <= bbox.maxLongitude &&
    latitude >= bbox.minLatitude &&
    latitude <= bbox.maxLatitude
  );
}

/** `bbox` as a query parameter: a route validates with it and the OpenAPI document lists it from it. */
export const bboxParameter = z
  .string({ error: (issue) => (Array.isArray(issue.input) ? GIVEN_TWICE : `must be ${FORM}`) })
  .transform(parsedBy(parseBbox, 'bbox'))
  .optional()
  .meta({
    param: {
      description:
        'Only the wells whose location lies inside this box, edges included, and so only their tubes: ' +
        '`minLon,minLat,maxLon,maxLat` in WGS 84 decimal degrees (the order of OGC API - Features), ' +
        'longitudes within [-180, 180], latitudes within [-90, 90], each minimum at most its maximum (a ' +
        'box does not cross the antimeridian). Wells without a location are left out. With `tubes` as ' +
        'well, both apply. Anything else, or the parameter twice, is 400. A box that holds none of the ' +
        'wells this key may read is an empty answer in the chosen format, not an error.',
    },
    examples: ['4.2,51.8,5.6,52.6'],
  });

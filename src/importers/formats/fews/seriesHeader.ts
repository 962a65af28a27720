/**
 * What a FEWS PI-XML series header decides: whether its events are levels at all (their units, the
 * `--parameter` selection), the datum they are in, and where the well lies.
 */
import { rdToWgs84 } from '../projection.js';

/** The header's elements this importer reads, as their text. */
export interface HeaderText {
  locationId?: string;
  parameterId?: string;
  missVal?: string;
  units?: string;
  lat?: string;
  lon?: string;
  x?: string;
  y?: string;
}

export const HEADER_FIELDS: ReadonlySet<string> = new Set<keyof HeaderText>([
  'locationId',
  'parameterId',
  'missVal',
  'units',
  'lat',
  'lon',
  'x',
  'y',
]);

/** Units that state the datum too: the spec's spellings of metres relative to NAP. */
const METRES_NAP = new Set(['mNAP', 'm NAP', 'm+NAP']);

/** The vertical datum of a series' levels, or undefined when its units are not metres. */
export function datumOfUnits(units: string | undefined, plainMetresDatum: string): string | undefined {
  if (units === 'm') return plainMetresDatum;
  return units !== undefined && METRES_NAP.has(units) ? 'NAP' : undefined;
}

/**
 * FEWS names its grids by name (`Rijks Driehoekstelsel`) and, in recent versions, by EPSG code; either
 * is RD New.
 */
export const namesRd = (geoDatum: string | undefined): boolean =>
  geoDatum !== undefined && /^(rijks driehoekstelsel|epsg:28992)$/i.test(geoDatum.trim());

/** A header's number, or why it is not one. */
export function headerNumber(text: string): number | string {
  const value = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text) ? Number(text) : Number.NaN;
  return Number.isFinite(value) ? value : `"${text}" is not a number`;
}

type Located = { longitude: number; latitude: number } | undefined;

/**
 * `lat`/`lon` when the header gives both; else `x`/`y` where the file's `geoDatum` names RD; else the
 * header states no location. Returns the field and reason of a coordinate that is not one.
 */
export function locationOf(
  header: HeaderText,
  geoDatum: string | undefined,
): { location: Located } | { field: string; reason: string } {
  if (header.lat !== undefined && header.lon !== undefined) {
    const latitude = headerNumber(header.lat);
    if (typeof latitude === 'string') return { field: 'lat', reason: latitude };
    const longitude = headerNumber(header.lon);
    if (typeof longitude === 'string') return { field: 'lon', reason: longitude };
    if (Math.abs(latitude) > 90) return { field: 'lat', reason: `${latitude} is not a latitude (-90 to 90)` };
    if (Math.abs(longitude) > 180) {
      return { field: 'lon', reason: `${longitude} is not a longitude (-180 to 180)` };
    }
    return { location: { longitude, latitude } };
  }
  if (header.x !== undefined && header.y !== undefined && namesRd(geoDatum)) {
    const x = headerNumber(header.x);
    if (typeof x === 'string') return { field: 'x', reason: x };
    const y = headerNumber(header.y);
    if (typeof y === 'string') return { field: 'y', reason: y };
    return { location: rdToWgs84(x, y) };
  }
  return { location: undefined };
}

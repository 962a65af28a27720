/**
 * Discovery's document, the wells a key may read, and its bodies: the JSON list and the GeoJSON
 * FeatureCollection, each written by fast-json-stringify from its zod schema, and the part of the
 * document inside a box.
 */
import { groupWells } from '../../domain/discoveryOrder.js';
import { compileSerializer } from '../../domain/jsonSchema.js';
import { type Bbox, containsLocation } from '../bbox.js';
import { type Tube, type Well, WellFeatureCollection, WellList } from './schemas.js';

/** The formats of discovery, in the order that breaks a tie of an Accept header's q-values. */
export const DISCOVERY_FORMATS = [
  { name: 'json', mediaType: 'application/json' },
  { name: 'geojson', mediaType: 'application/geo+json' },
] as const;
export type DiscoveryFormat = (typeof DISCOVERY_FORMATS)[number]['name'];
export const DISCOVERY_FORMAT_NAMES = DISCOVERY_FORMATS.map(({ name }) => name) as [
  DiscoveryFormat,
  ...DiscoveryFormat[],
];

/** A tube the key may read as the database gives it: null for what the registry does not know. */
export interface VisibleTubeRow {
  wellName: string;
  longitude: number | null;
  latitude: number | null;
  identifier: string;
  number: string;
  unit: string;
  verticalDatum: string;
  groundLevel: number | null;
  tubeTop: number | null;
  screenTop: number | null;
  screenBottom: number | null;
}

const ELEVATIONS = ['groundLevel', 'tubeTop', 'screenTop', 'screenBottom'] as const;

/** Unknown values are left out, never written as null. */
function tubeOf(row: VisibleTubeRow): Tube {
  const tube: Tube = {
    identifier: row.identifier,
    number: row.number,
    unit: row.unit,
    verticalDatum: row.verticalDatum,
  };
  for (const name of ELEVATIONS) {
    const value = row[name];
    if (value !== null) tube[name] = value;
  }
  return tube;
}

/** The wells of the rows in discovery's order, each with its location when known. */
export function discoveryDocument(rows: readonly VisibleTubeRow[]): Well[] {
  return groupWells(rows).map(({ name, tubes }): Well => {
    // Every row of a well carries the well's location.
    const { longitude, latitude } = tubes[0]!;
    const well: Well = { name, tubes: tubes.map(tubeOf) };
    if (longitude !== null && latitude !== null)
      well.location = { type: 'Point', coordinates: [longitude, latitude] };
    return well;
  });
}

/** The wells whose location lies inside the box, in the document's order. */
export const wellsInBox = (wells: readonly Well[], bbox: Bbox): Well[] =>
  wells.filter(
    ({ location }) =>
      location !== undefined && containsLocation(bbox, location.coordinates[0]!, location.coordinates[1]!),
  );

export const serializeWells = compileSerializer(WellList);
const serializeFeatures = compileSerializer(WellFeatureCollection);

/** The GeoJSON of the wells: one Feature per well, in their order. */
export const serializeWellFeatures = (wells: Well[]): string =>
  serializeFeatures({
    type: 'FeatureCollection',
    features: wells.map(({ name, location, tubes }) => ({
      type: 'Feature',
      geometry: location ?? null,
      properties: { name, tubes },
    })),
  });

export function writeWells(wells: Well[], format: DiscoveryFormat): Buffer {
  return Buffer.from(format === 'json' ? serializeWells(wells) : serializeWellFeatures(wells));
}

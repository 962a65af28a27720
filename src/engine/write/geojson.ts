/**
 * GeoJSON (RFC 7946), for latest: one FeatureCollection, one Feature per row, its geometry the tube's
 * well's location as a Point (or null, unknown), its properties the row's JSON object and the tube's
 * well name and number. Written as the JSON of latest is (json.ts), so the two agree value for value;
 * whole only with its closing `]}`.
 */
import { type LatestJsonPieces, latestFields, latestJsonWriter } from './json.js';
import { numberText } from './text.js';
import type { LatestFormat, LatestTube } from './writer.js';

/** A Point of `[longitude, latitude]`, or null: RFC 7946's geometry of a feature without a location. */
function geometry(location: LatestTube['location']): string {
  if (!location) return 'null';
  const [longitude, latitude] = location;
  return `{"type":"Point","coordinates":[${numberText(longitude)},${numberText(latitude)}]}`;
}

const PIECES: LatestJsonPieces = {
  opening: Buffer.from('{"type":"FeatureCollection","features":['),
  closing: Buffer.from(']}'),
  made: new WeakMap(),
  tube(tube: LatestTube) {
    const { before, after } = latestFields(tube);
    return {
      before: Buffer.from(`{"type":"Feature","geometry":${geometry(tube.location)},"properties":{${before}`),
      after: Buffer.from(
        `${after},"wellName":${JSON.stringify(tube.wellName)},"tubeNumber":${JSON.stringify(tube.tubeNumber)}}}`,
      ),
    };
  },
};

export const geojson: LatestFormat = {
  name: 'geojson',
  mediaType: 'application/geo+json',
  extension: undefined,
  latest: (options) => latestJsonWriter(PIECES, options),
};

/** RD New (EPSG:28992), the Dutch grid of BRO's delivered locations and DINO, to WGS 84 degrees. */
import proj4 from 'proj4';

/** EPSG's published definition, its datum shift to WGS 84 included. */
const RD_NEW =
  '+proj=sterea +lat_0=52.15616055555555 +lon_0=5.38763888888889 +k=0.9999079 +x_0=155000 +y_0=463000 ' +
  '+ellps=bessel +towgs84=565.417,50.3319,465.552,-0.398957,0.343988,-1.8774,4.0725 +units=m +no_defs';

const fromRd = proj4(RD_NEW, 'WGS84');

export function rdToWgs84(x: number, y: number): { longitude: number; latitude: number } {
  const [longitude, latitude] = fromRd.forward([x, y]) as [number, number];
  return { longitude, latitude };
}

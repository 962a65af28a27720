/** Every format of the measurements, by name. */
import { arrow } from './arrow.js';
import { csv } from './csv.js';
import { geojson } from './geojson.js';
import { json } from './json.js';
import {
  FORMAT_NAMES,
  type Format,
  type FormatName,
  LATEST_FORMAT_NAMES,
  type LatestFormat,
  type LatestFormatName,
} from './writer.js';

export const FORMATS: Readonly<Record<FormatName, Format>> = { json, csv, arrow };

/** In the order that breaks a tie. */
export const FORMAT_LIST: readonly Format[] = FORMAT_NAMES.map((name) => FORMATS[name]);

/** The formats of latest, by name. */
export const LATEST_FORMATS: Readonly<Record<LatestFormatName, LatestFormat>> = { ...FORMATS, geojson };

/** In the order that breaks a tie. */
export const LATEST_FORMAT_LIST: readonly LatestFormat[] = LATEST_FORMAT_NAMES.map(
  (name) => LATEST_FORMATS[name],
);

/** Every format, by name. */
import { arrow } from './arrow.js';
import { csv } from './csv.js';
import { json } from './json.js';
import { FORMAT_NAMES, type Format, type FormatName } from './writer.js';

export const FORMATS: Readonly<Record<FormatName, Format>> = { json, csv, arrow };

/** In the order that breaks a tie. */
export const FORMAT_LIST: readonly Format[] = FORMAT_NAMES.map((name) => FORMATS[name]);

/**
 * Tube identifiers of the field's files: a UUID version 5 in the URL namespace of a name each format
 * builds from what it calls the tube, so every machine and every re-import gives a tube the same one.
 */
import { v5 } from 'uuid';
import { UUID_SHAPE } from '../../domain/uuid.js';

/** RFC 9562's URL namespace. */
const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

export const tubeIdentifier = (name: string): string => v5(name, URL_NAMESPACE);

/** A BRO tube, from GMW and GLD alike: `urn:bro:gmw:{well}:{tubeNumber}`. */
export const broTube = (well: string, tubeNumber: string): string =>
  tubeIdentifier(`urn:bro:gmw:${well}:${tubeNumber}`);

export const dinoTube = (location: string, filterNumber: string): string =>
  tubeIdentifier(`urn:dino:${location}:${filterNumber}`);

export const fewsTube = (locationId: string): string => tubeIdentifier(`urn:fews:${locationId}`);

/**
 * BRO's own name of a tube: its well's BRO id (or, before BRO registers it, the source holder's code
 * `gwapi import bro-gmw` took) and the tube's number, `GMW000000036287:1`.
 */
const BRO_TUBE_NAME = /^([^\s:]+):([1-9]\d*)$/;

/** The identifier `--tube` names, as a UUID or as BRO names the tube; undefined when it is neither. */
export function namedTube(value: string): string | undefined {
  if (UUID_SHAPE.test(value)) return value.toLowerCase();
  const bro = BRO_TUBE_NAME.exec(value);
  return bro ? broTube(bro[1]!, bro[2]!) : undefined;
}

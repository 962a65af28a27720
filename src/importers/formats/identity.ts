/**
 * Tube identifiers of the field's files: a UUID version 5 in the URL namespace of a name each format
 * builds from what it calls the tube, so every machine and every re-import gives a tube the same one.
 */
import { v5 } from 'uuid';

/** RFC 9562's URL namespace. */
const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

export const tubeIdentifier = (name: string): string => v5(name, URL_NAMESPACE);

/** A BRO tube, from GMW and GLD alike: `urn:bro:gmw:{well}:{tubeNumber}`. */
export const broTube = (well: string, tubeNumber: string): string =>
  tubeIdentifier(`urn:bro:gmw:${well}:${tubeNumber}`);

export const dinoTube = (location: string, filterNumber: string): string =>
  tubeIdentifier(`urn:dino:${location}:${filterNumber}`);

export const fewsTube = (locationId: string): string => tubeIdentifier(`urn:fews:${locationId}`);

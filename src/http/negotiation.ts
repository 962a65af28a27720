/**
 * Which of several media types an Accept header asks for. Ours rather than `negotiator`'s (which
 * `accepts` and @fastify/accepts wrap): that one breaks a tie of q-values by the more specific range and
 * then by the client's order, where the contract gives a tie to the first of the offered types, and it
 * matches a range with parameters (`text/csv; charset=utf-8`) only against a type with the same
 * parameters.
 */
import { weightedElements } from './weightedElements.js';

/** Vary of every negotiated document: the format may follow Accept, and the coding Accept-Encoding. */
export const NEGOTIATED_VARY = 'Accept, Accept-Encoding';

/** How closely a range matches a type: a higher level decides over a lower one (RFC 9110 §12.5.1). */
const Specificity = { None: -1, Any: 0, AnySubtype: 1, Exact: 2 } as const;

/** `type/subtype` of a media type, its parameters left out. */
function typeAndSubtype(mediaType: string): [type: string, subtype: string] {
  const essence = mediaType.split(';', 1)[0]!.trim().toLowerCase();
  const slash = essence.indexOf('/');
  return [essence.slice(0, slash), essence.slice(slash + 1)];
}

function specificity(range: string, [type, subtype]: [string, string]): number {
  if (range === '*/*') return Specificity.Any;
  const slash = range.indexOf('/');
  if (range.slice(0, slash) !== type) return Specificity.None;
  const rangeSubtype = range.slice(slash + 1);
  if (rangeSubtype === '*') return Specificity.AnySubtype;
  return rangeSubtype === subtype ? Specificity.Exact : Specificity.None;
}

/**
 * The weight an Accept header gives each offered type: the q of the most specific range that matches
 * it (the highest q among equally specific ones), 0 when none does. Media-type parameters other than q
 * are not compared (any charset of text/csv is answered in UTF-8).
 */
function weights(accept: string, offered: readonly [string, string][]): number[] {
  const best = offered.map(() => ({ level: Specificity.None as number, q: 0 }));
  for (const { value: range, q } of weightedElements(accept)) {
    if (!range.includes('/')) continue;
    offered.forEach((type, i) => {
      const level = specificity(range, type);
      const current = best[i]!;
      if (level > current.level || (level === current.level && level !== Specificity.None && q > current.q)) {
        best[i] = { level, q };
      }
    });
  }
  return best.map(({ q }) => q);
}

/**
 * The offer an Accept header weighs most, the first among equals; the first offer for no Accept and for
 * an Accept that allows none of them (no 406: the contract answers in the first format then).
 */
/** Each list of offers' `type/subtype` pairs, worked out once: the lists are the service's constants. */
const offeredTypes = new WeakMap<readonly { mediaType: string }[], [string, string][]>();

export function negotiate<T extends { mediaType: string }>(
  accept: string | undefined,
  offers: readonly T[],
): T {
  if (accept === undefined) return offers[0]!;
  let types = offeredTypes.get(offers);
  if (!types) {
    types = offers.map(({ mediaType }) => typeAndSubtype(mediaType));
    offeredTypes.set(offers, types);
  }
  const weighed = weights(accept, types);
  let chosen = 0;
  for (let i = 1; i < offers.length; i++) if (weighed[i]! > weighed[chosen]!) chosen = i;
  return offers[chosen]!;
}

/**
 * Which format a series is written in: the `format` parameter when given, else the Accept header
 * (v1.1.md, "CSV"; v1.2.md, "Arrow IPC stream"). The negotiation is ours rather than `negotiator`'s (which `accepts` and
 * @fastify/accepts wrap): that one breaks a tie of q-values by the more specific range and then by the
 * client's order, where the contract gives a tie to JSON, then CSV, then Arrow, and it matches a range with parameters
 * (`text/csv; charset=utf-8`) only against a type with the same parameters.
 */

import { weightedElements } from '../../http/weightedElements.js';

/** In the order that breaks a tie of q-values. */
export const SERIES_FORMATS = ['json', 'csv', 'arrow'] as const;
export type SeriesFormat = (typeof SERIES_FORMATS)[number];

/** The media type each format is chosen for, as `type/subtype`. */
const NEGOTIATED: Record<SeriesFormat, [type: string, subtype: string]> = {
  json: ['application', 'json'],
  csv: ['text', 'csv'],
  arrow: ['application', 'vnd.apache.arrow.stream'],
};

/** Vary of every series response: the format may follow Accept, and the coding Accept-Encoding. */
export const SERIES_VARY = 'Accept, Accept-Encoding';

/** How closely a range matches a type: a higher level decides over a lower one (RFC 9110 §12.5.1). */
const Specificity = { None: -1, Any: 0, AnySubtype: 1, Exact: 2 } as const;

function specificity(range: string, [type, subtype]: [string, string]): number {
  if (range === '*/*') return Specificity.Any;
  const slash = range.indexOf('/');
  if (range.slice(0, slash) !== type) return Specificity.None;
  const rangeSubtype = range.slice(slash + 1);
  if (rangeSubtype === '*') return Specificity.AnySubtype;
  return rangeSubtype === subtype ? Specificity.Exact : Specificity.None;
}

/**
 * The weight an Accept header gives each format: the q of the most specific range that matches it (the
 * highest q among equally specific ones), 0 when none does. Media-type parameters other than q are not
 * compared (any charset of text/csv is answered in UTF-8).
 */
function weights(accept: string): Record<SeriesFormat, number> {
  const none = { level: Specificity.None as number, q: 0 };
  const best: Record<SeriesFormat, { level: number; q: number }> = { json: none, csv: none, arrow: none };
  for (const { value: range, q } of weightedElements(accept)) {
    if (!range.includes('/')) continue;
    for (const format of SERIES_FORMATS) {
      const level = specificity(range, NEGOTIATED[format]);
      const current = best[format];
      if (level > current.level || (level === current.level && level !== Specificity.None && q > current.q)) {
        best[format] = { level, q };
      }
    }
  }
  return { json: best.json.q, csv: best.csv.q, arrow: best.arrow.q };
}

/**
 * The format an Accept header asks for: the one it weighs most, the first of SERIES_FORMATS among
 * equals; JSON for no Accept and for an Accept that allows none of them (no 406: the contract answers
 * JSON then).
 */
export function negotiateSeriesFormat(accept: string | undefined): SeriesFormat {
  if (accept === undefined) return 'json';
  const weighed = weights(accept);
  let chosen: SeriesFormat = 'json';
  for (const format of SERIES_FORMATS) if (weighed[format] > weighed[chosen]) chosen = format;
  return chosen;
}

/**
 * Which format a series is written in: the `format` parameter when given, else the Accept header
 * (v1.1.md, "CSV"). The negotiation is ours rather than `negotiator`'s (which `accepts` and
 * @fastify/accepts wrap): that one breaks a tie of q-values by the more specific range and then by the
 * client's order, where the contract gives a tie to JSON, and it matches a range with parameters
 * (`text/csv; charset=utf-8`) only against a type with the same parameters.
 */

import { weightedElements } from '../../http/weightedElements.js';

export const SERIES_FORMATS = ['json', 'csv'] as const;
export type SeriesFormat = (typeof SERIES_FORMATS)[number];

/** The media type each format is chosen for, as `type/subtype`. */
const NEGOTIATED: Record<SeriesFormat, [type: string, subtype: string]> = {
  json: ['application', 'json'],
  csv: ['text', 'csv'],
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
  const best = { json: none, csv: none };
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
  return { json: best.json.q, csv: best.csv.q };
}

/**
 * The format an Accept header asks for. CSV only when it weighs more than JSON; JSON for a tie, for no
 * Accept, and for an Accept that allows neither (no 406: the contract answers JSON then).
 */
export function negotiateSeriesFormat(accept: string | undefined): SeriesFormat {
  if (accept === undefined) return 'json';
  const { json, csv } = weights(accept);
  return csv > json ? 'csv' : 'json';
}

/**
 * The elements of a header whose list elements may carry a weight (`;q=`), Accept and Accept-Encoding:
 * each element's value, lower case and trimmed, and its weight. What a weight counts for is the
 * caller's rule.
 */

/** RFC 9110 §12.4.2: `0`, `1` or a decimal of up to three digits in between. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** 1 without a q; 0 for a q outside the grammar, which refuses rather than guesses. */
export function weightedElements(header: string): { value: string; q: number }[] {
  return header.split(',').map((element) => {
    const [value = '', ...parameters] = element.split(';').map((part) => part.trim().toLowerCase());
    const parameter = parameters.find((candidate) => /^q\s*=/.test(candidate));
    if (parameter === undefined) return { value, q: 1 };
    const q = parameter.slice(parameter.indexOf('=') + 1).trim();
    return { value, q: QVALUE.test(q) ? Number(q) : 0 };
  });
}

/**
 * Natural order for names and tube numbers, as people sort them: digit runs compare by their numeric
 * value (`2` before `10`, `2a` before `10`), letters alphabetically without regard to case first.
 * The collator can call two different texts equal (`02` and `2`); the code-unit order then decides,
 * so the order is total and the same on every call.
 */
const collator = new Intl.Collator('en', { numeric: true });

export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * SQL literals for the selects of the row source (sql.ts): COPY takes no bind parameters, so a select
 * carries its values as text. Each function accepts only what it can write safely, and throws otherwise.
 */

/** An integer as a SQL literal (an id, a count of seconds). */
export function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}

const INT4_MIN = -(2 ** 31);
const INT4_MAX = 2 ** 31 - 1;

/** Integers within int4 (tube ids) as an int4[] literal; empty is allowed. */
export function int4ArrayLiteral(values: readonly number[]): string {
  const items = values.map((value) => {
    if (!Number.isInteger(value) || value < INT4_MIN || value > INT4_MAX) {
      throw new Error(`not an int4: ${value}`);
    }
    return String(value);
  });
  return `'{${items.join(',')}}'::int4[]`;
}

/** RFC 3339 UTC text as produced by formatInstant: digits, `-`, `:`, `T`, `.` and `Z` only. */
const UTC_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z$/;

/** An instant (formatInstant's text) as a timestamptz literal. */
export function instantLiteral(instant: string): string {
  if (!UTC_INSTANT.test(instant)) throw new Error(`not an RFC 3339 UTC instant: ${instant}`);
  return `'${instant}'::timestamptz`;
}

/**
 * The condition of a status filter on `column` (codes 0 to `stored` - 1 are stored), or undefined for
 * no filter (undefined), so that a select that passes every row is the select without the filter. One
 * status is `=`, all but one `<>`: a comparison per row costs the scan less than a list.
 */
export function statusCondition(
  statuses: readonly number[] | undefined,
  stored: number,
  column = 'status',
): string | undefined {
  if (statuses === undefined) return undefined;
  const codes = statuses.map(integerLiteral);
  if (codes.length === 0) throw new Error('a status filter that passes no status');
  if (codes.length === 1) return `${column} = ${codes[0]}`;
  if (codes.length === stored - 1) {
    const left = [...Array(stored).keys()].find((code) => !statuses.includes(code))!;
    return `${column} <> ${left}`;
  }
  return `${column} in (${codes.join(', ')})`;
}

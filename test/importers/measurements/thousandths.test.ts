/**
 * The direct path encodes a level in JavaScript (copyBinary.ts, measurementThousandths), the staging
 * path in SQL (sql/016's measurement_thousandths): both must store the same pair for every double, or a
 * re-import through the other path would find a stored row "changed" and the bytes on disk would
 * depend on the path. Compared here on real PostgreSQL over edge cases, decimals of 0 to 6 places of
 * every size, and arbitrary doubles; and each pair decodes (measurement_value) to the very same double.
 */
import fc from 'fast-check';
import t from 'tap';
import { measurementThousandths } from '../../../src/importers/measurements/copy/copyBinary.js';
import { freshDatabase } from '../../helpers/database.js';

const EDGES = [
  0,
  -0,
  0.6709999999999999,
  0.671,
  0.1,
  0.2,
  0.1 + 0.2,
  -0.001,
  0.001,
  0.0005,
  -0.0005,
  0.0015,
  1e-3,
  1e-4,
  5e-324,
  -5e-324,
  1e-300,
  1e300,
  -1e300,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  2147483.647,
  -2147483.647,
  2147483.648,
  -2147483.648,
  2147483.6465,
  2147483.647 - 2 ** -31,
  2147483.647 + 2 ** -31,
  -2147483.647 - 2 ** -31,
  2147483,
  -2147484,
  1e15,
  123456789.123,
  12.345678901234,
  -7.5,
  Math.fround(0.671),
  Math.fround(-1.23),
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

/** Decimals of `places` places, as a parser makes them from their text. */
const decimal = (places: number) =>
  fc
    .tuple(fc.integer({ min: -9_999_999_999, max: 9_999_999_999 }), fc.integer({ min: 0, max: 12 }))
    .map(([digits, scale]) => Number(`${digits % 10 ** Math.min(15, scale + places)}e-${places}`));

const randomValues = fc.sample(
  fc.oneof(
    ...[0, 1, 2, 3, 4, 5, 6].map(decimal),
    fc.double({ noNaN: true }),
    fc.double({ min: -3e6, max: 3e6, noNaN: true }),
    fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }).map((n) => n / 1000),
  ),
  { numRuns: 120_000, seed: 36 },
);

/** A double's text that PostgreSQL parses back to the same double, -0 included. */
const text = (value: number) => (Object.is(value, -0) ? '-0' : String(value));

t.test('JavaScript and SQL encode every double alike, and each decodes to the same double', async (t) => {
  const { sql } = await freshDatabase(t);
  const values = [...EDGES, ...randomValues];
  let fitting = 0;
  const disagreements: string[] = [];
  for (let at = 0; at < values.length; at += 20_000) {
    const batch = values.slice(at, at + 20_000);
    const rows = await sql<{ n: string; thousandths: number | null; same: boolean }[]>`
      select n::text, t as thousandths,
             float8send(measurement_value(case when t is null then v end, t)) = float8send(v) as same
      from unnest(${batch.map(text)}::float8[]) with ordinality as i (v, n),
           measurement_thousandths(v) as t
      order by i.n`;
    for (const [i, row] of rows.entries()) {
      const value = batch[i]!;
      const inJs = measurementThousandths(value) ?? null;
      if (inJs !== row.thousandths || !row.same)
        disagreements.push(`${text(value)}: JavaScript ${inJs}, SQL ${row.thousandths}, same ${row.same}`);
      if (inJs !== null) fitting++;
    }
  }
  t.same(disagreements, [], `${values.length} values, ${fitting} of them as thousandths`);
  t.ok(fitting > values.length / 3 && fitting < values.length, 'both outcomes are well represented');
  t.same(
    [
      0, -0, 0.6709999999999999, 0.671, 2147483.647, -2147483.647, 2147483.648, -2147483.648, 1e300, 1e-300,
    ].map((v) => measurementThousandths(v) ?? null),
    [0, null, null, 671, 2147483647, -2147483647, null, null, null, null],
  );
});

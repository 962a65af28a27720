/**
 * What the daily rollups tell a page of `measurements` (src/v1/ogc/features.ts), for any period (both
 * ends included, either open), any statuses and any tubes: numberMatched (measurementsMatchedSelect), the
 * rollups' counts of the whole days and the rows of the days a period cuts, is the count of the rows
 * that pass; and a page read as the parts its rollups bound (measurementsPageParts: each tube from its
 * first day to its last, the last to the day that fills the page) holds what the page without those
 * bounds holds.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { formatInstant, type Instant, instantOfMicros, parseInstant } from '../../../src/domain/datetime.js';
import { STATUSES } from '../../../src/domain/status.js';
import {
  measurementsMatchedSelect,
  measurementsPageParts,
  measurementsPageSelect,
} from '../../../src/v1/ogc/features.js';
import type { Period } from '../../../src/v1/ogc/query.js';
import type { TubeInView } from '../../../src/v1/tubesInView.js';
import { addMeasurements, addWell, rollUpDays } from '../../../testkit/fixtures.js';
import { freshDatabase } from '../../helpers/database.js';

const DAYS = ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06'];
const TIMES = ['00:00:00Z', '00:00:00.000001Z', '06:30:00.25Z', '12:00:00Z', '23:59:59.999999Z'];
const INSTANTS = DAYS.flatMap((day) => TIMES.map((time) => `${day}T${time}`));
/** Bounds a period may take: each row's instant, a microsecond either side of it, and times between. */
const BOUNDS = [
  ...INSTANTS.flatMap((text) => {
    const { seconds, micros } = parseInstant(text);
    const micro = (by: number) => formatInstant(instantOfMicros(seconds * 1e6 + micros + by));
    return [text, micro(-1), micro(1)];
  }),
  '2023-12-31T12:00:00Z',
  '2024-01-02T18:00:00Z',
  '2024-01-07T00:00:00Z',
];

/** Three tubes' rows over six days, of every status, the third's sparse, and their rollups. */
async function seeded(t: Test) {
  const { sql } = await freshDatabase(t);
  const tubes = await addWell(sql, 'Matched', [{ number: '1' }, { number: '2' }, { number: '3' }]);
  const ids = tubes.map((tube) => tube.id);
  const kept = [(k: number) => k % 4 !== 0, (k: number) => (k + 1) % 4 !== 0, (k: number) => k % 7 === 3];
  for (const [i, { id }] of tubes.entries())
    await addMeasurements(
      sql,
      id,
      INSTANTS.filter((_, k) => kept[i]!(k)).map((at, k) => [at, String(k)]),
    );
  await sql`update measurements set status = (tube_id + extract(microseconds from observed_at)::int8) % 3`;
  await rollUpDays(sql, ids);
  return { sql, ids };
}

const bound = fc.option(fc.constantFrom(...BOUNDS), { nil: undefined });
/** A period of the bounds: open at either end or not, within a day or across days. */
const period = fc.tuple(bound, bound).map(([a, b]): Period => {
  const [from, to] = a && b && a > b ? [b, a] : [a, b];
  return {
    from: from === undefined ? undefined : parseInstant(from),
    to: to === undefined ? undefined : parseInstant(to),
  };
});
const statuses = fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined });
const RUNS = 400;

t.test('numberMatched is the count of the rows that pass, for any period and statuses', async (t) => {
  const { sql, ids } = await seeded(t);
  const text = (instant: Instant | undefined) => (instant === undefined ? null : formatInstant(instant));
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(
      period,
      statuses,
      fc.constantFrom(ids, [ids[0]!], [ids[1]!]),
      async (datetime, status, tubeIds) => {
        const [counted] = await sql.unsafe<{ matched: number }[]>(
          measurementsMatchedSelect(tubeIds, { ...(status && { status }), datetime }),
        );
        const [from, to] = [text(datetime.from), text(datetime.to)];
        const [expected] = await sql<{ count: number }[]>`
        select count(*)::int as count from measurements
        where tube_id = any(${tubeIds}::int4[])
          and (${status ?? null}::text[] is null or status = any(
            select (array_position(${[...STATUSES]}::text[], name) - 1)::int2 from unnest(${status ?? []}::text[]) name))
          and (${from}::timestamptz is null or observed_at >= ${from}::timestamptz)
          and (${to}::timestamptz is null or observed_at <= ${to}::timestamptz)`;
        cases++;
        return counted!.matched === expected!.count;
      },
    ),
    { numRuns: RUNS, seed: 17 },
  );
  t.equal(cases, RUNS, 'periods of every kind: open, within a day, on midnights, a microsecond off');
});

t.test(
  'a page read in the parts its rollups bound holds what the page without the bounds holds',
  async (t) => {
    const { sql, ids } = await seeded(t);
    // The page's functions read a tube's id alone.
    const tubes = ids.map((id) => ({ id }) as TubeInView);
    const rows = (select: string) =>
      sql.unsafe(`select tube, observed_at::text as at, status from (${select}) page`);
    const kinds = { none: 0, one: 0, more: 0 };
    await fc.assert(
      fc.asyncProperty(
        period,
        statuses,
        fc.constantFrom(0, 1, 2),
        fc.option(fc.constantFrom(...BOUNDS), { nil: undefined }),
        fc.constantFrom(1, 2, 3, 5, 8, 13),
        async (datetime, status, start, afterText, limit) => {
          const query = { ...(status && { status }), datetime };
          const after = afterText === undefined ? undefined : parseInstant(afterText);
          const parts = await measurementsPageParts(sql, tubes, start, after, query, limit);
          kinds[parts!.length === 0 ? 'none' : parts!.length === 1 ? 'one' : 'more']++;
          const bounded = await rows(measurementsPageSelect(tubes, start, after, query, limit, parts));
          const whole = await rows(measurementsPageSelect(tubes, start, after, query, limit));
          return JSON.stringify(bounded) === JSON.stringify(whole);
        },
      ),
      { numRuns: RUNS, seed: 18 },
    );
    t.ok(
      Object.values(kinds).every((count) => count > RUNS / 20),
      `pages of no tube, of one and of more: ${JSON.stringify(kinds)}`,
    );
  },
);

t.test('a page over more tubes than its parts are looked for in reads them unbounded', async (t) => {
  const { sql } = await freshDatabase(t);
  const numbers = Array.from({ length: 40 }, (_, k) => ({ number: String(k + 1) }));
  const tubes = (await addWell(sql, 'Sparse', numbers)).map(({ id }) => ({ id }) as TubeInView);
  for (const [k, { id }] of tubes.entries())
    await addMeasurements(sql, id, [
      [`2024-01-${String((k % 28) + 1).padStart(2, '0')}T06:00:00Z`, String(k)],
    ]);
  await rollUpDays(
    sql,
    tubes.map(({ id }) => id),
  );
  const rows = (select: string) => sql.unsafe(`select tube, observed_at::text as at from (${select}) page`);
  for (const [limit, expected] of [
    [5, 6],
    [30, 31],
    [31, undefined],
  ] as const) {
    const parts = await measurementsPageParts(sql, tubes, 0, undefined, {}, limit);
    t.equal(parts?.length, expected, `a page of ${limit}: ${expected ?? 'no'} parts`);
    t.same(
      await rows(measurementsPageSelect(tubes, 0, undefined, {}, limit, parts)),
      await rows(measurementsPageSelect(tubes, 0, undefined, {}, limit)),
      'the same rows as the page read unbounded',
    );
  }
});

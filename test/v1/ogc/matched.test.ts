/**
 * numberMatched of `measurements` (measurementsMatchedSelect): the rollups' counts of the whole days,
 * the rows of the days a period cuts counted one by one; for any period (both ends included, either
 * open), any statuses and any tubes, the count of the rows that pass.
 */
import fc from 'fast-check';
import t from 'tap';
import { formatInstant, instantOfMicros, parseInstant } from '../../../src/domain/datetime.js';
import { STATUSES } from '../../../src/domain/status.js';
import { measurementsMatchedSelect } from '../../../src/v1/ogc/features.js';
import type { Period } from '../../../src/v1/ogc/query.js';
import { addMeasurements, addWell, rollUpDays } from '../../../testkit/fixtures.js';
import { freshDatabase } from '../../helpers/database.js';

const DAYS = ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'];
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
  '2024-01-05T00:00:00Z',
];

t.test('numberMatched is the count of the rows that pass, for any period and statuses', async (t) => {
  const { sql } = await freshDatabase(t);
  const tubes = await addWell(sql, 'Matched', [{ number: '1' }, { number: '2' }]);
  const ids = tubes.map((tube) => tube.id);
  for (const [i, { id }] of tubes.entries())
    await addMeasurements(
      sql,
      id,
      INSTANTS.filter((_, k) => (k + i) % 4 !== 0).map((at, k) => [at, String(k)]),
    );
  await sql`update measurements set status = (tube_id + extract(microseconds from observed_at)::int8) % 3`;
  await rollUpDays(sql, ids);

  const bound = fc.option(fc.constantFrom(...BOUNDS), { nil: undefined });
  const statuses = fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined });
  const which = fc.constantFrom(ids, [ids[0]!], [ids[1]!]);
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(bound, bound, statuses, which, async (a, b, status, tubeIds) => {
      const [from, to] = a && b && a > b ? [b, a] : [a, b];
      const datetime: Period = {
        from: from === undefined ? undefined : parseInstant(from),
        to: to === undefined ? undefined : parseInstant(to),
      };
      const [counted] = await sql.unsafe<{ matched: number }[]>(
        measurementsMatchedSelect(tubeIds, { ...(status && { status }), datetime }),
      );
      const [expected] = await sql<{ count: number }[]>`
        select count(*)::int as count from measurements
        where tube_id = any(${tubeIds}::int4[])
          and (${status ?? null}::text[] is null or status = any(
            select (array_position(${[...STATUSES]}::text[], name) - 1)::int2 from unnest(${status ?? []}::text[]) name))
          and (${from ?? null}::timestamptz is null or observed_at >= ${from ?? null}::timestamptz)
          and (${to ?? null}::timestamptz is null or observed_at <= ${to ?? null}::timestamptz)`;
      cases++;
      return counted!.matched === expected!.count;
    }),
    { numRuns: 400, seed: 17 },
  );
  t.equal(cases, 400, 'periods of every kind: open, within a day, on midnights, a microsecond off');
});

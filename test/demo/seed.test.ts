import t from 'tap';
import { localDateTime, reachableBase } from '../../src/demo/banner.js';
import { DEMO_DAYS, seedDemo } from '../../src/demo/seed.js';
import { DEMO_TUBES, DEMO_WELLS } from '../../src/demo/wells.js';
import { UserError } from '../../src/errors.js';
import { freshDatabase } from '../helpers/database.js';

const PER_TUBE = DEMO_DAYS * 96;

t.test('seedDemo seeds a year per tube once, then reuses it', async (t) => {
  const { sql } = await freshDatabase(t);
  const first = await seedDemo(sql);
  t.match(first, { seeded: true, wells: DEMO_WELLS.length, tubes: DEMO_TUBES.length });
  t.equal(first.measurements, DEMO_TUBES.length * PER_TUBE);
  t.equal(first.to.getTime() % 86_400_000, 0, 'ends at the start of a UTC day');
  t.ok(Date.now() - first.to.getTime() < 86_400_000, 'the start of the current day');
  t.equal(first.to.getTime() - first.from.getTime(), DEMO_DAYS * 86_400_000);
  const before = await sql`select tube_id, observed_at, measurement_value(value, value_thousandths) as value
    from measurements order by 1, 2 limit 1000`;

  const second = await seedDemo(sql);
  t.same(second, { ...first, seeded: false });
  t.same(
    await sql`select tube_id, observed_at, measurement_value(value, value_thousandths) as value
    from measurements order by 1, 2 limit 1000`,
    before,
  );

  const seasons = await sql<{ identifier: string; winter: number; summer: number }[]>`
    select t.identifier::text,
           avg(value) filter (where extract(month from observed_at) in (2, 3)) as winter,
           avg(value) filter (where extract(month from observed_at) in (8, 9)) as summer
    from (select tube_id, observed_at, measurement_value(value, value_thousandths) as value from measurements) m
    join tubes t on t.id = m.tube_id group by 1`;
  for (const row of seasons) t.ok(row.winter > row.summer, `${row.identifier}: higher in late winter`);

  // Every well has a location and every tube its elevations, its levels between ground and screen.
  const placed = await sql<{ located: boolean; mean: number; groundLevel: number; screenBottom: number }[]>`
    select w.longitude is not null and w.latitude is not null as located, avg(m.value) as mean,
           t.ground_level as "groundLevel", t.screen_bottom as "screenBottom"
    from tubes t join wells w on w.id = t.well_id
    join (select tube_id, measurement_value(value, value_thousandths) as value from measurements) m
      on m.tube_id = t.id
    group by w.id, t.id`;
  t.equal(placed.length, DEMO_TUBES.length);
  for (const tube of placed) {
    t.ok(tube.located, 'a located well');
    t.ok(
      tube.screenBottom < tube.mean && tube.mean < tube.groundLevel,
      'the level between screen and ground',
    );
  }
});

t.test('seedDemo completes a partly seeded demo without duplicating', async (t) => {
  const { sql } = await freshDatabase(t);
  const first = await seedDemo(sql);
  await sql`delete from measurements where tube_id = (select id from tubes where identifier = ${DEMO_TUBES[0]!.identifier})`;
  const again = await seedDemo(sql);
  t.same(again, first, 'the missing tube is seeded over the same interval');
});

t.test('seedDemo does not mix demo wells into an operator’s own data', async (t) => {
  const { sql } = await freshDatabase(t);
  await sql`insert into wells (name) values ('B32C0123')`;
  await t.rejects(seedDemo(sql), UserError);
  await t.rejects(seedDemo(sql), /already holds wells of its own \(such as "B32C0123"\)/);
  const [counts] =
    await sql`select (select count(*)::int from wells) as wells, (select count(*)::int from tubes) as tubes`;
  t.same(counts, { wells: 1, tubes: 0 });
});

t.test('example times are Dutch local time with the right offset', async (t) => {
  t.equal(localDateTime(new Date('2025-01-15T12:00:00Z'), 'Europe/Amsterdam'), '2025-01-15T13:00:00+01:00');
  t.equal(localDateTime(new Date('2025-07-01T00:00:00Z'), 'Europe/Amsterdam'), '2025-07-01T02:00:00+02:00');
  t.equal(localDateTime(new Date('2025-07-01T00:00:00Z'), 'UTC'), '2025-07-01T00:00:00+00:00');
});

t.test('a wildcard bind address is printed as loopback', async (t) => {
  t.equal(reachableBase('http://0.0.0.0:3000'), 'http://127.0.0.1:3000');
  t.equal(reachableBase('http://[::]:3000'), 'http://[::1]:3000');
  t.equal(reachableBase('http://10.1.2.3:8080'), 'http://10.1.2.3:8080');
});

import t from 'tap';
import { midnightIn } from '../../../src/importers/formats/dino/midnight.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000', '');

t.test('the instant a date begins, winter, summer and the days the clocks change', async (t) => {
  const amsterdam = midnightIn('Europe/Amsterdam');
  t.equal(iso(amsterdam(2024, 1, 15)), '2024-01-14T23:00:00Z');
  t.equal(iso(amsterdam(2024, 7, 15)), '2024-07-14T22:00:00Z');
  t.equal(iso(amsterdam(2024, 3, 31)), '2024-03-30T23:00:00Z', 'the clocks go forward at 02:00');
  t.equal(iso(amsterdam(2024, 10, 27)), '2024-10-26T22:00:00Z', 'and back at 03:00');
  // São Paulo's clocks went from 00:00 to 01:00 on 2018-11-04: that day began at 01:00 (-02:00).
  t.equal(iso(midnightIn('America/Sao_Paulo')(2018, 11, 4)), '2018-11-04T03:00:00Z');
});

t.test('a date asked again, by another reader, or in another zone', async (t) => {
  const first = midnightIn('Europe/Amsterdam')(2021, 6, 1);
  t.equal(midnightIn('Europe/Amsterdam')(2021, 6, 1), first);
  t.equal(iso(midnightIn('UTC')(2021, 6, 1)), '2021-06-01T00:00:00Z', 'not the date of another zone');
  t.equal(iso(midnightIn('Europe/Amsterdam')(2021, 6, 1)), '2021-05-31T22:00:00Z');
});

t.test('every day of forty years is midnight in the zone, each time it is asked', async (t) => {
  const wallClock = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Amsterdam',
    dateStyle: 'short',
    timeStyle: 'medium',
  });
  let wrong = 0;
  for (const pass of [1, 2]) {
    const midnight = midnightIn('Europe/Amsterdam');
    for (let day = Date.UTC(1990, 0, 1); day < Date.UTC(2030, 0, 1); day += 86_400_000) {
      const date = new Date(day);
      const seconds = midnight(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
      const expected = `${date.toLocaleDateString('en-GB', { timeZone: 'UTC' })}, 00:00:00`;
      if (wallClock.format(seconds * 1000) !== expected) wrong++;
    }
    t.equal(wrong, 0, `pass ${pass}: no day begins at another time`);
  }
});

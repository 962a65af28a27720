/** The parts of conditional requests that need no server: If-None-Match lists, HTTP-dates, tags. */
import t from 'tap';
import { entityTag, parseHttpDate, parseIfNoneMatch } from '../../src/http/conditional.js';
import { seriesTag } from '../../src/v1/series/validators.js';

t.test('If-None-Match: tags, weak or not, a list, *; anything else is not one', async (t) => {
  t.same(parseIfNoneMatch('"a"'), ['a']);
  t.same(parseIfNoneMatch(' W/"a" ,"b",, "" '), ['a', 'b', '']);
  t.equal(parseIfNoneMatch(' * '), '*');
  for (const malformed of ['', ',', 'a', '"a', '"a" "b"', '*, "a"', 'w/"a"', '"a"b', '"\u0001"']) {
    t.equal(parseIfNoneMatch(malformed), undefined, JSON.stringify(malformed));
  }
  const long = '"x", '.repeat(4000);
  const started = performance.now();
  t.equal((parseIfNoneMatch(long) as string[]).length, 4000);
  t.equal(parseIfNoneMatch(`${long}junk`), undefined);
  t.ok(performance.now() - started < 100, '20 KB in linear time');
});

t.test('HTTP-dates: the three forms, and nothing else', async (t) => {
  const expected = Date.UTC(1994, 10, 6, 8, 49, 37);
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), expected);
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT'), expected);
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), expected);
  for (const malformed of [
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 31 Feb 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    '1994-11-06T08:49:37Z',
    'yesterday',
    '',
  ]) {
    t.equal(parseHttpDate(malformed), undefined, malformed);
  }
});

t.test('a tag changes with each input of the representation', async (t) => {
  const inputs = {
    tubeIdentifier: '2f1c7a4e-9b1d-4c3e-8f55-0a6d3c9e1b42',
    seriesVersion: '7',
    from: '2024-01-01T00:00:00Z',
    to: '2024-02-01T00:00:00Z',
    coding: undefined,
    aggregate: undefined,
    variant: 'application/json',
  } as const;
  const tags = new Set([
    seriesTag(inputs),
    seriesTag({ ...inputs, seriesVersion: '8' }),
    seriesTag({ ...inputs, from: '2024-01-01T00:00:00.5Z' }),
    seriesTag({ ...inputs, to: '2024-02-02T00:00:00Z' }),
    seriesTag({ ...inputs, coding: 'gzip' }),
    seriesTag({ ...inputs, coding: 'br' }),
    seriesTag({ ...inputs, variant: 'text/csv' }),
    seriesTag({ ...inputs, aggregate: 'P1D' }),
    seriesTag({ ...inputs, aggregate: 'PT1H' }),
  ]);
  t.equal(tags.size, 9);
  t.equal(seriesTag(inputs), seriesTag({ ...inputs }), 'the same inputs, the same tag');
  // The list is unambiguous: moving text between inputs is another tag.
  t.not(entityTag(['a,b', 'c']), entityTag(['a', 'b,c']));
});

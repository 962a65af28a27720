import t from 'tap';
import {
  compareInstants,
  dayStart,
  earlierOf,
  formatInstant,
  instantOfMicros,
  laterOf,
  microsBetween,
  nextDay,
  nextMicro,
  parseDateTime,
  parseInstant,
} from '../../src/domain/datetime.js';

const normalised = (text: string) => {
  const result = parseDateTime(text);
  return result.ok ? formatInstant(result.instant) : `error: ${result.reason}`;
};

t.test('valid RFC 3339 values normalise to UTC Z', async (t) => {
  t.equal(normalised('2024-01-01T00:00:00Z'), '2024-01-01T00:00:00Z');
  t.equal(normalised('2024-01-01T02:00:00+02:00'), '2024-01-01T00:00:00Z');
  t.equal(normalised('2023-12-31T22:30:00-01:30'), '2024-01-01T00:00:00Z');
  t.equal(normalised('2024-01-01t00:00:00z'), '2024-01-01T00:00:00Z', 'lower-case t and z');
  t.equal(normalised('2024-02-29T12:00:00Z'), '2024-02-29T12:00:00Z', 'leap day');
  t.equal(normalised('2000-02-29T00:00:00Z'), '2000-02-29T00:00:00Z', '400-year leap day');
  t.equal(normalised('2024-03-01T00:30:00+01:00'), '2024-02-29T23:30:00Z', 'offset crosses a leap day');
  t.equal(normalised('0001-01-01T00:00:00Z'), '0001-01-01T00:00:00Z');
  t.equal(normalised('9999-12-31T23:59:59.999999Z'), '9999-12-31T23:59:59.999999Z');
  t.equal(normalised('1969-12-31T23:59:59.5Z'), '1969-12-31T23:59:59.5Z', 'before the epoch');
});

t.test('fractions keep microseconds and lose only trailing zeros', async (t) => {
  t.equal(normalised('2024-01-01T00:00:00.000000Z'), '2024-01-01T00:00:00Z');
  t.equal(normalised('2024-01-01T00:00:00.1Z'), '2024-01-01T00:00:00.1Z');
  t.equal(normalised('2024-01-01T00:00:00.120Z'), '2024-01-01T00:00:00.12Z');
  t.equal(normalised('2024-01-01T00:00:00.000001Z'), '2024-01-01T00:00:00.000001Z');
  t.equal(normalised('2024-01-01T00:00:00.123456+05:45'), '2023-12-31T18:15:00.123456Z');
});

t.test('impossible, incomplete and offset-less values are refused with a reason', async (t) => {
  const cases: [string, RegExp][] = [
    ['2023-02-29T00:00:00Z', /day 29 does not exist in 2023-02/],
    ['1900-02-29T00:00:00Z', /day 29 does not exist/],
    ['2024-04-31T00:00:00Z', /day 31 does not exist/],
    ['2024-13-01T00:00:00Z', /month 13 does not exist/],
    ['2024-00-01T00:00:00Z', /month 00 does not exist/],
    ['2024-01-00T00:00:00Z', /day 00 does not exist/],
    ['2024-01-01T24:00:00Z', /hour 24 does not exist/],
    ['2024-01-01T23:60:00Z', /minute 60 does not exist/],
    ['2024-01-01T23:59:60Z', /second 60 is not supported/],
    ['2024-01-01T00:00:00+24:00', /offset \+24:00 does not exist/],
    ['2024-01-01T00:00:00.1234567Z', /more than 6 fractional digits/],
    ['0000-01-01T00:00:00Z', /year must be from 0001/],
    ['2024-01-01', /RFC 3339/],
    ['2024-01-01T00:00:00', /RFC 3339/],
    ['2024-01-01 00:00:00Z', /RFC 3339/],
    ['2024-01-01T00:00Z', /RFC 3339/],
    ['2024-01-01T00:00:00+0200', /RFC 3339/],
    ['2024-01-01T00:00:00.Z', /RFC 3339/],
    ['20240101T000000Z', /RFC 3339/],
    ['', /RFC 3339/],
    [' 2024-01-01T00:00:00Z', /RFC 3339/],
    ['2024-01-01T00:00:00Z\n', /RFC 3339/],
    ['２０２４-01-01T00:00:00Z', /RFC 3339/],
  ];
  for (const [text, reason] of cases) {
    const result = parseDateTime(text);
    t.notOk(result.ok, JSON.stringify(text));
    if (!result.ok) t.match(result.reason, reason, JSON.stringify(text));
  }
});

t.test('a + that arrived as a space gets its own message', async (t) => {
  const result = parseDateTime('2024-01-01T00:00:00 02:00');
  t.notOk(result.ok);
  if (!result.ok) t.match(result.reason, /encode '\+' as %2B/);
});

t.test('microsBetween is exact', async (t) => {
  const at = parseInstant;
  t.equal(microsBetween(at('2024-01-01T00:00:00Z'), at('2025-01-01T00:00:00Z')), 366 * 86_400 * 1e6);
  t.equal(
    microsBetween(at('2024-01-01T00:00:00Z'), at('2025-01-01T00:00:00.000001Z')),
    366 * 86_400 * 1e6 + 1,
  );
  t.equal(microsBetween(at('2024-01-01T00:00:00.5Z'), at('2024-01-01T00:00:00.25Z')), -250_000);
});

t.test("parseInstant gives parseDateTime's instant, and names a text it refuses", async (t) => {
  t.same(parseInstant('2024-03-31T02:30:00.25+02:00'), { seconds: 1_711_845_000, micros: 250_000 });
  t.throws(() => parseInstant('2024-02-30T00:00:00Z'), { message: /^2024-02-30T00:00:00Z: / });
});

t.test('instants compared, and the UTC midnight that starts their day', async (t) => {
  const at = parseInstant;
  t.ok(compareInstants(at('2024-01-01T00:00:00.000001Z'), at('2024-01-01T00:00:00Z')) > 0);
  t.ok(compareInstants(at('2023-12-31T23:59:59.999999Z'), at('2024-01-01T00:00:00Z')) < 0);
  t.equal(compareInstants(at('2024-01-01T01:00:00+01:00'), at('2024-01-01T00:00:00Z')), 0);
  t.same(dayStart(at('2024-01-01T23:59:59.999999Z')), at('2024-01-01T00:00:00Z'));
  t.same(dayStart(at('2024-01-01T00:00:00Z')), at('2024-01-01T00:00:00Z'), 'a midnight is its own');
  t.same(dayStart(at('1969-12-31T12:00:00Z')), at('1969-12-31T00:00:00Z'), 'before 1970 too');
});

t.test('steps of an instant: the next day, the next microsecond, the earlier and later of two', async (t) => {
  const at = parseInstant;
  t.same(nextDay(at('2024-02-28T23:59:59.999999Z')), at('2024-02-29T00:00:00Z'));
  t.same(nextDay(at('2024-02-29T00:00:00Z')), at('2024-03-01T00:00:00Z'), 'a midnight steps a whole day');
  t.same(nextDay(at('1969-12-31T12:00:00Z')), at('1970-01-01T00:00:00Z'), 'before 1970 too');
  t.same(nextMicro(at('2024-01-01T00:00:00.000001Z')), at('2024-01-01T00:00:00.000002Z'));
  t.same(nextMicro(at('2023-12-31T23:59:59.999999Z')), at('2024-01-01T00:00:00Z'), 'carried into the second');
  t.same(nextMicro(instantOfMicros(-1)), at('1970-01-01T00:00:00Z'));
  const [early, late] = [at('2024-01-01T00:00:00Z'), at('2024-01-01T00:00:00.000001Z')];
  t.same([earlierOf(early, late), earlierOf(late, early)], [early, early]);
  t.same([laterOf(early, late), laterOf(late, early)], [late, late]);
});

t.test('instantOfMicros splits microseconds since 1970, before it too', async (t) => {
  t.same(instantOfMicros(1_711_845_000_250_000), { seconds: 1_711_845_000, micros: 250_000 });
  t.same(instantOfMicros(-1), { seconds: -1, micros: 999_999 });
  t.equal(formatInstant(instantOfMicros(-1)), '1969-12-31T23:59:59.999999Z');
});

t.test('formatting agrees with Date for every day of four centuries', async (t) => {
  let mismatches = 0;
  for (let day = -146_097; day < 146_097 * 2; day += 1) {
    const seconds = day * 86_400 + 3_723;
    const expected = new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
    if (formatInstant({ seconds, micros: 0 }) !== expected) mismatches += 1;
    const back = parseDateTime(expected);
    if (!back.ok || back.instant.seconds !== seconds) mismatches += 1;
  }
  t.equal(mismatches, 0);
});

t.test(
  'accepts exactly the RFC 3339 grammar and computes the same instant as Date (random mutations)',
  async (t) => {
    // The grammar as a regular expression: the oracle the character-by-character parser is checked against.
    const grammar =
      /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
    const bases = ['2024-02-29T23:59:59.123456+05:45', '1999-12-31t00:00:00z', '2023-06-15T12:30:00.5-09:30'];
    const alphabet = '0123456789-:+.TtZz x\u0663';
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    let disagreements = 0;
    let accepted = 0;
    for (let i = 0; i < 30_000; i++) {
      let text = bases[random(bases.length)]!;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const char = alphabet[random(alphabet.length)]!;
        const kind = random(3);
        text = text.slice(0, at) + (kind === 2 ? '' : char) + text.slice(kind === 0 ? at : at + 1);
      }
      const result = parseDateTime(text);
      const shapeOk = result.ok || !/RFC 3339|arrived as a space/.test(result.reason);
      const m = grammar.exec(text);
      if (shapeOk !== (m !== null)) disagreements++;
      if (result.ok && m) {
        accepted++;
        const [, y, mo, d, h, mi, s, , , , oh, om] = m.map(Number) as number[];
        const offset = m[9] ? (m[9] === '-' ? -1 : 1) * (oh! * 60 + om!) : 0;
        // setUTCFullYear, unlike Date.UTC, takes the years 0 to 99 literally.
        const utc = new Date(0);
        utc.setUTCFullYear(y!, mo! - 1, d!);
        utc.setUTCHours(h!, mi!, s!);
        if (result.instant.seconds !== utc.getTime() / 1000 - offset * 60) disagreements++;
        if (result.instant.micros !== Number((m[7] ?? '').padEnd(6, '0'))) disagreements++;
      }
    }
    t.equal(disagreements, 0);
    t.ok(accepted > 1000, `enough mutations stay valid to compare instants (${accepted})`);
  },
);

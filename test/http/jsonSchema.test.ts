/**
 * compileSerializer's numbers: written exactly as JSON.stringify writes them, and without garbage in
 * V8's old generation (fast-json-stringify's own `'' + number` puts every non-integer's digits there,
 * through V8's number-to-string cache; see asNumber in src/http/jsonSchema.ts).
 */
import t from 'tap';
import { z } from 'zod';
import { compileSerializer } from '../../src/domain/jsonSchema.js';
import { oldGenerationMb } from '../helpers/heap.js';
import { seededRandom } from '../helpers/random.js';

const Row = z.object({ at: z.string(), value: z.number() });
const serializeRows = compileSerializer(z.array(Row));

/** Deterministic doubles of every kind a level can be, and the edge cases of the format. */
function doubles(count: number, seed: number): number[] {
  const next = seededRandom(seed);
  const values = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, Number.MAX_VALUE, -1.23];
  while (values.length < count) {
    const magnitude = 10 ** Math.floor(next() * 10 - 5);
    values.push(Math.round((next() - 0.5) * magnitude * 1000) / 1000, (next() - 0.5) * magnitude);
  }
  return values;
}

t.test('numbers come out as JSON.stringify writes them', async (t) => {
  const rows = doubles(20_000, 7).map((value, i) => ({ at: `t${i}`, value }));
  t.equal(serializeRows(rows), JSON.stringify(rows));
  t.equal(serializeRows([{ at: 'a', value: Number.POSITIVE_INFINITY }]), '[{"at":"a","value":null}]');
  t.equal(serializeRows([{ at: 'a', value: Number.NEGATIVE_INFINITY }]), '[{"at":"a","value":null}]');
  t.throws(() => serializeRows([{ at: 'a', value: Number.NaN }]), /cannot be converted to a number/);
});

t.test(
  'numbers given as text: plain JSON decimals as they are, anything else read and written again',
  async (t) => {
    const write = (value: string) =>
      serializeRows([{ at: 'a', value }]).slice('[{"at":"a","value":'.length, -2);
    for (const text of ['-1.23', '0', '-0.5', '100', '0.0001', '123456789012345', '12.3456789012345']) {
      t.equal(write(text), text, `${text} as it is`);
    }
    // PostgreSQL's exponent forms, and numeric text that is not JSON as it stands.
    t.equal(write('-0'), '0', '-0 as JavaScript writes it');
    t.equal(write('1e-07'), '1e-7');
    t.equal(write('1.2345678901234568e+20'), '123456789012345680000');
    t.equal(write('1e+21'), '1e+21');
    t.equal(write('007'), '7');
    t.equal(write('.5'), '0.5');
    t.equal(write('Infinity'), 'null');
    t.throws(() => write('1.2.3'), /cannot be converted to a number/);
    t.throws(() => write('NaN'), /cannot be converted to a number/);
  },
);

t.test('writing numbers leaves no garbage in the old generation', async (t) => {
  // 500,000 distinct doubles in batches of 2,000, as a long series is written. The rows exist before
  // the measurement, so that only what serializing allocates counts. With `'' + number` the old
  // generation grows on every pass, and only a full collection would free it.
  const values = doubles(500_000, 11);
  const batches: { at: string; value: number }[][] = [];
  for (let start = 0; start < values.length; start += 2000) {
    batches.push(values.slice(start, start + 2000).map((value) => ({ at: '2024-01-01T00:00:00Z', value })));
  }
  // Warm-up: a first pass lets V8 optimize the serializer (before that, unoptimized code allocates
  // differently), as it is in a server that has run for a while.
  for (const batch of batches) serializeRows(batch);
  const before = oldGenerationMb();
  let length = 0;
  for (const batch of batches) length += serializeRows(batch).length;
  const grown = oldGenerationMb() - before;
  t.ok(length > 10_000_000, 'the numbers were written');
  t.ok(grown < 2, `old generation grew by ${grown.toFixed(1)} MB (less than 2 MB)`);
});

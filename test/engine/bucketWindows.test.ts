/** The windows a select of some buckets reads (buckets.ts): whole buckets, the last one ending by `to`. */
import t from 'tap';
import { bucketSpan, bucketsWindow } from '../../src/engine/read/buckets.js';
import { instantLiteral } from '../../src/engine/read/literals.js';

const FROM = '2024-03-01T00:00:30Z';
const TO = '2024-03-01T05:15:00Z';
const HOUR = 3_600;
const window = (from: string, to: string) => ({ from: instantLiteral(from), to: instantLiteral(to) });

t.test('buckets first to last, from the start of the first to the end of the last', async (t) => {
  t.same(bucketsWindow(FROM, TO, HOUR, 0, 0), window(FROM, '2024-03-01T01:00:30Z'));
  t.same(bucketsWindow(FROM, TO, HOUR, 1, 3), window('2024-03-01T01:00:30Z', '2024-03-01T04:00:30Z'));
  t.same(bucketsWindow(FROM, TO, HOUR, 2, 5), window('2024-03-01T02:00:30Z', TO), 'the last cut short by to');
  t.same(
    bucketsWindow(FROM, '2024-03-01T05:00:30Z', HOUR, 4, 4),
    window('2024-03-01T04:00:30Z', '2024-03-01T05:00:30Z'),
  );
});

t.test('the buckets a span of instants touches', async (t) => {
  const span = (from: string, to: string) => bucketSpan(FROM, TO, HOUR, { from, to });
  t.same(
    span('2024-03-01T01:10:00Z', '2024-03-01T01:20:00Z'),
    window('2024-03-01T01:00:30Z', '2024-03-01T02:00:30Z'),
  );
  t.same(
    span('2024-03-01T01:00:30Z', '2024-03-01T02:00:30Z'),
    window('2024-03-01T01:00:30Z', '2024-03-01T02:00:30Z'),
    'a half-open span ending on a bucket start leaves that bucket out',
  );
  t.same(
    span('2024-03-01T00:59:00Z', '2024-03-01T05:14:59.5Z'),
    window(FROM, TO),
    'from the first bucket to the one cut short',
  );
  const empty = bucketSpan(FROM, TO, HOUR, undefined);
  t.same(empty, window(TO, FROM), 'no span: a window that holds nothing');
});

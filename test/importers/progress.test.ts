import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { progressLine } from '../../src/importers/progress.js';

/** Carriage return, then ANSI "erase to the end of the line". */
const CLEAR_LINE = '\r\x1b[K';

/** A stream that says it is a terminal and keeps what is written to it. */
function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY }) as unknown as NodeJS.WriteStream;
  let written = '';
  (stream as unknown as PassThrough).on('data', (chunk: Buffer) => (written += chunk.toString()));
  return { stream, written: () => written };
}

t.test('on a terminal: one line about once a second, rewritten in place, removed at the end', async (t) => {
  const { stream, written } = terminal(true);
  const progress = progressLine(stream, 'data.csv');
  progress.update(10);
  t.equal(written(), '', 'nothing within the first second');
  await sleep(1100);
  progress.update(123_456);
  progress.update(123_457);
  t.ok(written().startsWith(CLEAR_LINE), 'the line is rewritten from its start');
  t.match(
    written().slice(CLEAR_LINE.length),
    /^data\.csv: 123,456 lines read \([\d,]+\/s\)$/,
    'once a second',
  );
  progress.done();
  t.ok(written().endsWith(`/s)${CLEAR_LINE}`), 'the line is cleared at the end');
});

t.test('not a terminal: nothing at all', async (t) => {
  const { stream, written } = terminal(false);
  const progress = progressLine(stream, 'data.csv');
  await sleep(1100);
  progress.update(5);
  progress.done();
  t.equal(written(), '');
});

import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { ImportInput } from '../../src/importers/measurements/importInput.js';
import { progressLine, readingShown } from '../../src/importers/progress.js';

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
  const progress = progressLine(stream, 'data.csv', 111_700_000);
  progress.update(10);
  t.equal(written(), '', 'nothing within the first second');
  await sleep(1100);
  progress.update(45_250_000);
  progress.update(45_260_000);
  t.ok(written().startsWith(CLEAR_LINE), 'the line is rewritten from its start');
  t.match(
    written().slice(CLEAR_LINE.length),
    /^data\.csv: 45\.3 of 111\.7 MB read \(40 %, [\d.]+ MB\/s\)$/,
    "once a second: the bytes read, of the file's size",
  );
  progress.done();
  t.ok(written().endsWith(`/s)${CLEAR_LINE}`), 'the line is cleared at the end');
});

t.test('of a stream, whose size is unknown: the bytes read', async (t) => {
  const { stream, written } = terminal(true);
  const progress = progressLine(stream, 'stdin');
  await sleep(1100);
  progress.update(2_500_000);
  t.match(written().slice(CLEAR_LINE.length), /^stdin: 2\.5 MB read \([\d.]+ MB\/s\)$/);
});

t.test('each reading of the input shown from its start, its chunks as they were', async (t) => {
  const chunks = [Buffer.from('tube,'), Buffer.from('time\n'), Buffer.from('x')];
  const input: ImportInput = {
    async *read() {
      yield* chunks;
    },
    full: false,
    close: async () => {},
    size: 11,
  };
  const shown: number[] = [];
  const shownInput = readingShown(input, { update: (bytes) => shown.push(bytes), done() {} });
  t.equal(shownInput.size, 11);
  for (let reading = 0; reading < 2; reading++) {
    const read: Buffer[] = [];
    for await (const chunk of shownInput.read()) read.push(chunk);
    t.same(read, chunks);
  }
  t.same(shown, [5, 10, 11, 5, 10, 11], 'bytes read so far, after each chunk, from 0 again');
});

t.test('not a terminal: nothing at all', async (t) => {
  const { stream, written } = terminal(false);
  const progress = progressLine(stream, 'data.csv');
  await sleep(1100);
  progress.update(5);
  progress.done();
  t.equal(written(), '');
});

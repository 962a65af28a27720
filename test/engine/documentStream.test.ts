/**
 * The lifecycle (src/engine/document.ts) with a document of many tubes, read from one select against a
 * real PostgreSQL, with a writer of the test's own: tube boundaries taken inside batches, the heads
 * of tubes without rows (every tube) or none of them (a delta), a list of many empty tubes in bounded
 * chunks, and the rows of each tube in the network's select in the series' order.
 */
import { once } from 'node:events';
import t from 'tap';
import { connect } from '../../src/db/connect.js';
import { BATCH_SIZE, type DocumentPlan, openDocument } from '../../src/engine/document.js';
import { measurementsSelect, shapeOf } from '../../src/engine/read/selects.js';
import { seriesHead } from '../../src/engine/read/tubes.js';
import type { SeriesWriter } from '../../src/engine/write/writer.js';
import { addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { freshDatabase } from '../helpers/database.js';

const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-01-03T00:00:00Z';
/** Rows of the long tube: two days of minutes, more than one batch. */
const LONG_ROWS = 2 * 1440;

/** One line per part: `O` the opening, `H <tube>` a head, `B <first?> <rows> <tube of the rows>`, `E`. */
const lines = (): SeriesWriter => ({
  head: (head) => Buffer.from(`H ${head.tubeIdentifier}\n`),
  batch: (rows, first) => Buffer.from(`B ${first} ${rows.length} ${rows.tube[0]}\n`),
  close: () => Buffer.from('E\n'),
});

t.test('a document of many tubes', async (t) => {
  const db = await freshDatabase(t);
  const [short, empty, long, last] = await addWell(db.sql, 'Doc', [
    { number: '1' },
    { number: '2' },
    { number: '3' },
    { number: '4' },
  ]);
  await addRegularSeries(db.sql, short!.id, FROM, '2024-01-01T01:00:00Z', '1 minute');
  await addRegularSeries(db.sql, long!.id, FROM, TO, '1 minute');
  await addRegularSeries(db.sql, last!.id, FROM, '2024-01-01T00:10:00Z', '1 minute');
  const sql = connect(db.url, { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const tubes = [short!, empty!, long!, last!];

  async function read(
    plan: Omit<DocumentPlan, 'select' | 'shape' | 'tubes'>,
    ids = tubes.map((tube) => tube.id),
  ) {
    const chunks: string[] = [];
    const opened = await openDocument(
      sql,
      {
        async plan(pool, tx) {
          const select = await measurementsSelect(pool, tx, ids, { from: FROM, to: TO });
          const document: DocumentPlan = {
            ...plan,
            tubes: ids.map((_, i) =>
              seriesHead({ unit: 'm', verticalDatum: 'NAP' }, `t${i}`, { from: FROM, to: TO }),
            ),
            select,
            shape: shapeOf(undefined),
          };
          return { document };
        },
      },
      lines(),
    );
    // Flowing, so that each chunk comes as the document wrote it (a paused read joins what is buffered).
    opened!.body.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    await once(opened!.body, 'end');
    return chunks;
  }

  t.test('every tube: a head for each, those without rows too, in the list order', async (t) => {
    const chunks = await read({ opening: Buffer.from('O\n'), everyTube: true });
    const text = chunks.join('');
    const second = BATCH_SIZE - 60;
    t.equal(
      text,
      'O\nH t0\nB true 60 0\nH t1\nH t2\n' +
        `B true ${second} 2\nB false ${LONG_ROWS - second} 2\nH t3\nB true 10 3\nE\n`,
    );
    t.ok(
      chunks[0]!.startsWith('O\nH t0\nB true 60 0\nH t1\nH t2\nB true'),
      'one batch, one chunk, heads included',
    );
  });

  t.test('a delta: only tubes with rows', async (t) => {
    const text = (await read({ opening: Buffer.from('O\n'), everyTube: false })).join('');
    t.equal(
      text,
      `O\nH t0\nB true 60 0\nH t2\nB true ${BATCH_SIZE - 60} 2\nB false ${LONG_ROWS - BATCH_SIZE + 60} 2\nH t3\nB true 10 3\nE\n`,
    );
  });

  t.test('a delta without rows: the opening and the close', async (t) => {
    t.equal((await read({ opening: Buffer.from('O\n'), everyTube: false }, [empty!.id])).join(''), 'O\nE\n');
  });

  t.test("the network's select walks its list in order: no sort above each tube's select", async (t) => {
    const ids = tubes.map((tube) => tube.id);
    for (const aggregate of [undefined, 'P1D'] as const) {
      const plan = await sql.begin(async (tx) => {
        const select = await measurementsSelect(sql, tx, ids, { from: FROM, to: TO, aggregate });
        return tx.unsafe<{ 'QUERY PLAN': string }[]>(`explain (costs off) ${select}`);
      });
      const text = plan.map((row) => row['QUERY PLAN']).join('\n');
      t.match(
        text,
        /^Nested Loop\n {2}-> {2}Function Scan on unnest listed\n/,
        `${aggregate ?? 'raw'}: the list, in order`,
      );
      if (!aggregate) t.notMatch(text, /Sort/, 'raw: no sort at all');
    }
  });

  t.test('many tubes without rows: their heads in bounded chunks', async (t) => {
    const many = Array.from({ length: 60_000 }, () => empty!.id);
    const chunks = await read({ everyTube: true }, many);
    t.equal(
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('H ')).length,
      many.length,
    );
    t.ok(chunks.length > 2, `${chunks.length} chunks`);
    t.ok(Math.max(...chunks.map((chunk) => chunk.length)) < 1024 * 1024, 'none of them large');
  });
});

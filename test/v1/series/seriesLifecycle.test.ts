/**
 * The series lifecycle (src/engine/document.ts) with a writer of the test's own, against a real
 * PostgreSQL: whatever the format, the head comes first, every measurement once and in order, the close
 * only after the snapshot ended well; a representation that fails midway cuts the stream off without
 * its close; a reader that stops early ends the transaction; and each way out gives the connection
 * back exactly once.
 */
import t from 'tap';
import { connect } from '../../../src/db/connect.js';
import { BATCH_SIZE, READ_BEFORE_SENDING_BYTES } from '../../../src/engine/document.js';
import { instantText } from '../../../src/engine/write/text.js';
import type { SeriesWriter } from '../../../src/engine/write/writer.js';
import type { Client } from '../../../src/keys/clients.js';
import { addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { freshDatabase } from '../../helpers/database.js';
import { openSeries } from '../../helpers/series.js';
import { until } from '../../helpers/until.js';

const FROM = '2024-01-01T00:00:00Z';
/** 3 days of 1-minute data: 4,320 measurements, three batches. */
const TO = '2024-01-04T00:00:00Z';
const MEASUREMENTS = 3 * 24 * 60;

const client: Client = { keyId: 'test', allTubes: true, grants: new Set() };

/**
 * One line per part: the head's fields, each batch as `B <first?> <count> <first instant>`, then `E`.
 * `padTo`: each batch line is filled with dots to that many bytes (a document that starts before its end).
 */
function lines(failAtBatch = Number.POSITIVE_INFINITY, padTo = 0): SeriesWriter {
  let batches = 0;
  return {
    head: (head) => Buffer.from(`H ${head.tubeIdentifier} ${head.from} ${head.to} ${head.unit}\n`),
    batch(rows, first) {
      if (++batches >= failAtBatch) throw new Error('representation failed');
      const line = `B ${first} ${rows.length} ${instantText(rows.observedAt[0]!)}`;
      return Buffer.from(`${line.padEnd(padTo - 1, '.')}\n`);
    },
    close: () => Buffer.from('E\n'),
  };
}

t.test('the lifecycle, written once for every representation', async (t) => {
  const db = await freshDatabase(t);
  const [tube, empty] = await addWell(db.sql, 'Lifecycle', [{ number: '1' }, { number: '2' }]);
  await addRegularSeries(db.sql, tube!.id, FROM, TO, '1 minute');
  const sql = connect(db.url, { max: 2 });
  t.teardown(() => sql.end({ timeout: 1 }));

  /** Opens the series; counts how often the connection was given back. */
  async function open(identifier: string, representation: SeriesWriter) {
    const connection = { held: 0, released: 0 };
    const stream = await openSeries(
      sql,
      {
        client,
        tubeIdentifier: identifier,
        from: FROM,
        to: TO,
        connection: { held: () => connection.held++, released: () => connection.released++ },
      },
      representation,
    );
    return { stream, connection };
  }

  const openTransactions = async () => {
    const [row] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from pg_stat_activity
      where datname = ${db.name} and state like 'idle in transaction%'`;
    return row!.count;
  };

  t.test('head, batches in order, then the close', async (t) => {
    const { stream, connection } = await open(tube!.identifier, lines());
    let text = '';
    for await (const chunk of stream!) text += (chunk as Buffer).toString();
    const parts = text.trim().split('\n');
    t.equal(parts[0], `H ${tube!.identifier} ${FROM} ${TO} m`, 'the head first');
    t.equal(parts.at(-1), 'E', 'the close last');
    const batches = parts.slice(1, -1).map((line) => line.split(' '));
    t.same(
      batches.map((batch) => batch[1]),
      batches.map((_, index) => String(index === 0)),
      'only the batch after the head is first',
    );
    t.equal(
      batches.reduce((sum, batch) => sum + Number(batch[2]), 0),
      MEASUREMENTS,
      'every measurement once',
    );
    t.same(
      batches.map((batch) => batch[2]),
      [String(BATCH_SIZE), String(BATCH_SIZE), String(MEASUREMENTS - 2 * BATCH_SIZE)],
      'in batches of BATCH_SIZE',
    );
    t.equal(batches[1]![3], '2024-01-02T09:20:00Z', 'the second batch starts where the first ended');
    t.same(connection, { held: 1, released: 1 }, 'the connection given back once');
  });

  t.test('an interval without measurements: the head, then the close', async (t) => {
    const { stream } = await open(empty!.identifier, lines());
    let text = '';
    for await (const chunk of stream!) text += (chunk as Buffer).toString();
    t.equal(text, `H ${empty!.identifier} ${FROM} ${TO} m\nE\n`);
  });

  t.test('an unknown tube: no stream, the connection given back', async (t) => {
    const { stream, connection } = await open('00000000-0000-4000-8000-000000000000', lines());
    t.equal(stream, undefined);
    t.same(connection, { held: 1, released: 1 });
  });

  t.test('a failure before READ_BEFORE_SENDING_BYTES is an error before the first byte', async (t) => {
    // Three small batches: the whole document is read before the stream would begin.
    const connection = { held: 0, released: 0 };
    await t.rejects(
      openSeries(
        sql,
        {
          client,
          tubeIdentifier: tube!.identifier,
          from: FROM,
          to: TO,
          connection: { held: () => connection.held++, released: () => connection.released++ },
        },
        lines(3),
      ),
      { message: 'representation failed' },
      'opening the stream fails: nothing was sent, the read can be tried again',
    );
    t.same(connection, { held: 1, released: 1 }, 'the connection given back once');
    t.equal(await openTransactions(), 0, 'no transaction left open');
  });

  t.test('a failure after the first byte cuts the stream off without its close', async (t) => {
    // A first batch as large as what is read before sending: the stream begins with it.
    const { stream, connection } = await open(tube!.identifier, lines(2, READ_BEFORE_SENDING_BYTES));
    let text = '';
    const failure = await (async () => {
      try {
        for await (const chunk of stream!) text += (chunk as Buffer).toString();
      } catch (error) {
        return error as Error;
      }
      return undefined;
    })();
    t.equal(failure?.message, 'representation failed', 'the stream fails');
    t.match(text, /^H .*\nB true 2000 /, 'what was sent before stays sent');
    t.notMatch(text, /E\n$/, 'no close');
    t.same(connection, { held: 1, released: 1 }, 'the connection given back once');
    t.equal(await openTransactions(), 0, 'no transaction left open');
  });

  t.test('a reader that leaves after the first chunk ends the transaction', async (t) => {
    const { stream, connection } = await open(tube!.identifier, lines());
    for await (const _chunk of stream!) break;
    await until(
      'the connection is given back',
      async () => connection.released,
      (count) => count > 0,
    );
    t.same(connection, { held: 1, released: 1 }, 'the connection given back once');
    t.equal(await openTransactions(), 0, 'no transaction left open');
  });
});

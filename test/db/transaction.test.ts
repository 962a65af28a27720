/**
 * The transaction API (src/db/transaction.ts) against a real PostgreSQL: begin's modes, and iterate's
 * items pulled by a consumer: one snapshot, items pulled one by one, the connection back in the pool
 * when the consumer stops, and a lost connection that neither crashes the process nor spoils the pool.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { connect, type Queryable, type Sql } from '../../src/db/connect.js';
import { retryIfConnectionLost } from '../../src/db/retry.js';
import { begin, beginReserved, iterate } from '../../src/db/transaction.js';
import { freshDatabase } from '../helpers/database.js';

const inSnapshot = <T>(pool: Sql, produce: Parameters<typeof iterate<T>>[1]) =>
  iterate(pool, produce, { snapshot: true });

/** A full garbage collection on demand (the test process is not started with --expose-gc). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

async function backendStates(admin: Sql, applicationName: string): Promise<string[]> {
  const rows = await admin<{ state: string }[]>`
    select state from pg_stat_activity where application_name = ${applicationName}`;
  return rows.map((row) => row.state);
}

t.test('begin: committed or rolled back, and a snapshot is read-only repeatable read', async (t) => {
  const { sql } = await freshDatabase(t);
  await sql`create table notes (text text)`;
  const mode = (tx: Queryable) =>
    tx<{ isolation: string; readOnly: string }[]>`
      select current_setting('transaction_isolation') as isolation,
             current_setting('transaction_read_only') as "readOnly"`.then(([row]) => row);
  t.same(await begin(sql, mode, { snapshot: true }), { isolation: 'repeatable read', readOnly: 'on' });
  t.same(await begin(sql, mode), { isolation: 'read committed', readOnly: 'off' });
  await begin(sql, (tx) => tx`insert into notes values ('kept')`);
  await t.rejects(
    begin(sql, async (tx) => {
      await tx`insert into notes values ('rolled back')`;
      throw new Error('work failed');
    }),
    { message: 'work failed' },
  );
  const session = await sql.reserve();
  await beginReserved(session, async () => {
    await session`insert into notes values ('reserved')`;
  });
  await t.rejects(
    beginReserved(session, async () => {
      await session`insert into notes values ('reserved, rolled back')`;
      throw new Error('migration failed');
    }),
    { message: 'migration failed' },
  );
  session.release();
  t.same(await sql`select text from notes order by text`, [{ text: 'kept' }, { text: 'reserved' }]);
});

t.test('iterate', async (t) => {
  const db = await freshDatabase(t);
  const applicationName = `iterate-${process.pid}`;
  // One connection: anything not given back makes the next query hang.
  const pool = connect(db.url, { max: 1, applicationName });
  t.teardown(() => pool.end({ timeout: 1 }));
  const withTimeout = <T>(promise: Promise<T>) =>
    Promise.race([promise, sleep(5000).then(() => Promise.reject(new Error('timed out')))]);

  t.test('yields every item, pulled one at a time, in one read-only snapshot', async (t) => {
    const produced: number[] = [];
    const items = inSnapshot(pool, async function* (tx) {
      const [start] = await tx<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`;
      for (let i = 0; i < 3; i++) {
        produced.push(i);
        const [row] = await tx<{ snapshot: string; readOnly: string }[]>`
          select pg_current_snapshot()::text as snapshot, current_setting('transaction_read_only') as "readOnly"`;
        yield { i, sameSnapshot: row!.snapshot === start!.snapshot, readOnly: row!.readOnly };
      }
    });
    const first = await items.next();
    t.same(produced, [0], 'nothing is produced ahead of the consumer');
    t.same(first.value, { i: 0, sameSnapshot: true, readOnly: 'on' });
    const rest = [];
    for await (const item of items) rest.push(item);
    t.same(
      rest.map((item) => item.i),
      [1, 2],
    );
    t.ok(rest.every((item) => item.sameSnapshot));
    t.same(await pool`select 1 as one`, [{ one: 1 }], 'the connection is back');
  });

  t.test('a consumer that stops ends the transaction before return() resolves', async (t) => {
    const items = inSnapshot(pool, async function* (tx) {
      for (let i = 0; ; i++) {
        await tx`select 1`;
        yield i;
      }
    });
    t.equal((await items.next()).value, 0);
    t.same(await backendStates(db.sql, applicationName), ['idle in transaction']);
    await items.return();
    t.same(await backendStates(db.sql, applicationName), ['idle'], 'transaction over');
    t.same(await withTimeout(pool`select 2 as two`), [{ two: 2 }]);
  });

  t.test('an item the consumer is done with can be collected while the transaction goes on', async (t) => {
    // A year-long series passes ~100 batches of 250 KB through here: holding on to them until the
    // transaction ends made the server's memory grow with the length of the series.
    const consumed: WeakRef<object>[] = [];
    const items = inSnapshot(pool, async function* (tx) {
      for (let i = 0; i < 20; i++) {
        await tx`select 1`;
        yield { i, payload: new Array(10_000).fill(i) };
      }
    });
    for (let i = 0; i < 10; i++) consumed.push(new WeakRef((await items.next()).value as object));
    collectGarbage();
    // The last item may still be referenced by the generator's own state; every earlier one must be gone.
    const alive = consumed.slice(0, -1).filter((item) => item.deref() !== undefined).length;
    t.equal(alive, 0, 'no consumed item is kept alive by the iterator');
    t.same(await backendStates(db.sql, applicationName), ['idle in transaction'], 'still in the transaction');
    await items.return();
  });

  t.test('an error of the producer reaches the consumer and rolls back', async (t) => {
    const items = inSnapshot(pool, async function* (tx) {
      yield 1;
      await tx`select * from no_such_table`;
    });
    t.equal((await items.next()).value, 1);
    await t.rejects(items.next(), { code: '42P01' });
    t.same(await withTimeout(pool`select 3 as three`), [{ three: 3 }]);
  });

  for (const when of ['between two items', 'while a statement runs'] as const) {
    t.test(`a connection lost ${when} fails the consumer, and only it`, async (t) => {
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      process.on('uncaughtException', onUncaught);
      t.teardown(() => {
        process.off('uncaughtException', onUncaught);
      });
      const items = inSnapshot(pool, async function* (tx) {
        const [backend] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        yield backend!.pid;
        await tx`select pg_sleep(${when === 'while a statement runs' ? 5 : 0})`;
        yield 0;
      });
      const pid = (await items.next()).value as number;
      // The consumer's promise is observed as soon as it exists, as a real consumer awaits it: the
      // lost connection may reject it before pg_terminate_backend's own answer arrives, and a
      // rejection nobody listens to yet would itself reach uncaughtException.
      const failsLost = (next: Promise<unknown>) =>
        t.rejects(withTimeout(next), { code: 'CONNECTION_CLOSED' });
      let failed: Promise<unknown>;
      if (when === 'between two items') {
        await db.sql`select pg_terminate_backend(${pid})`;
        await sleep(200);
        failed = failsLost(items.next());
      } else {
        failed = failsLost(items.next());
        await sleep(200);
        await db.sql`select pg_terminate_backend(${pid})`;
      }
      await failed;
      await sleep(200);
      t.same(uncaught, [], 'nothing thrown outside the consumer: no ROLLBACK written to a dead socket');
      // postgres.js may hand the old session's error to the first statement on the reconnected
      // connection; the API retries such a statement once (src/db/retry.ts), and so does this.
      t.same(await withTimeout(retryIfConnectionLost(() => pool`select 4 as four`)), [{ four: 4 }]);
      t.same(await withTimeout(pool`select 5 as five`), [{ five: 5 }], 'the pool works');
    });
  }
});

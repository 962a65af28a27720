import t from 'tap';
import { connect } from '../../src/db/connect.js';
import { freshDatabase, testDatabaseUrl } from '../helpers/database.js';

const sql = connect(testDatabaseUrl(), { max: 1 });
t.teardown(() => sql.end({ timeout: 1 }));

t.test('a timestamp parameter given as text keeps its microseconds', async (t) => {
  const [row] = await sql`select ${'2024-01-01T00:00:00.000123+01:00'}::timestamptz::text as at`;
  t.equal(row?.at, '2023-12-31 23:00:00.000123+00');
  const [bound] = await sql`
    select ${'2024-01-01T00:00:00.000124Z'}::timestamptz > '2024-01-01 00:00:00.000123+00' as later`;
  t.equal(bound?.later, true, 'an interval bound moves by no microsecond');
});

t.test('Date parameters and timestamptz results are Dates as before', async (t) => {
  const at = new Date('2024-05-06T07:08:09.123Z');
  const [row] = await sql`select ${at}::timestamptz as at, ${at}::timestamptz::text as text`;
  t.same(row?.at, at);
  t.equal(row?.text, '2024-05-06 07:08:09.123+00');
});

t.test('a session of a migrated database compiles no statement by JIT (sql/015)', async (t) => {
  const { url } = await freshDatabase(t);
  // A session opened after the migration: the setting is the database's, read at a session's start.
  const session = connect(url, { max: 1 });
  t.teardown(() => session.end({ timeout: 1 }));
  const [row] = await session`show jit`;
  t.equal(row?.jit, 'off');
});

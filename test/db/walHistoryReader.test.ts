/**
 * Who may read the WAL history (sql/012): the functions answer for a role that may not read the files,
 * with less and without an error, and `historyReader` tells `gwapi migrate` whether to warn.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { historyReader } from '../../src/db/walHistory.js';
import { freshDatabase } from '../helpers/database.js';

t.test('the history functions under an owner that may not read the files, then may', async (t) => {
  const { sql } = await freshDatabase(t);
  t.match(await historyReader(sql), { readable: true }, 'migrated as a superuser');
  const role = `gwtest_reader_${randomBytes(4).toString('hex')}`;
  await sql.unsafe(`create role ${role}`);
  t.teardown(() => sql.unsafe(`drop owned by ${role}; drop role ${role}`).then(() => undefined));
  await sql.unsafe(`alter function wal_timeline_history(integer) owner to ${role}`);
  await sql.unsafe(`alter function wal_place() owner to ${role}`);
  t.same(await historyReader(sql), { owner: role, readable: false });
  const [history] = await sql`select * from wal_timeline_history(2)`;
  t.same(history, { history: null, written_at: null }, 'unreadable: no history, no error');
  const [place] = await sql<{ timeline: number; lsn: string }[]>`select timeline, lsn::text from wal_place()`;
  t.equal(place!.timeline, 1, 'the place is still read');
  t.not(place!.lsn, '0/0');
  await sql.unsafe(`grant pg_read_server_files, pg_read_all_stats to ${role}`);
  t.same(await historyReader(sql), { owner: role, readable: true });
});

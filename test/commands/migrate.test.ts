/**
 * `gwapi migrate` where TimescaleDB is installed but not in shared_preload_libraries, on the native
 * build started that way: creating the extension would end the session with FATAL, so the command
 * refuses before it changes anything, in one line that says what to add and how to go on without it.
 */
import t from 'tap';
import { connect } from '../../src/db/connect.js';
import { startTimescale, timescaleMissing } from '../../testkit/timescale.js';
import { runCli } from '../helpers/cli.js';

t.test('TimescaleDB installed, not preloaded', async (t) => {
  const missing = timescaleMissing();
  if (missing) return t.plan(0, missing);
  const server = await startTimescale({ owner: t, settings: { shared_preload_libraries: "''" } });
  const sql = connect(server.url, { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const env = { DATABASE_URL: server.url };

  const refused = await runCli(['migrate'], { env });
  t.equal(refused.code, 1, 'exit code 1');
  t.equal(
    refused.stderr,
    'gwapi: TimescaleDB is installed on this server but not preloaded, and creating it would end the ' +
      'session: add timescaledb to shared_preload_libraries (now empty) and restart PostgreSQL, then run ' +
      '`gwapi migrate` again; or run `gwapi migrate --without-timescaledb` to keep measurements a plain ' +
      'PostgreSQL table for good (docs/operations/deploy.md)\n',
  );
  t.equal(refused.stdout, '');
  t.same(await sql`select version from schema_migrations`, [], 'no migration applied');
  t.same(await sql`select to_regclass('measurements') as table`, [{ table: null }], 'no table made');

  const plain = await runCli(['migrate', '--without-timescaledb'], { env });
  t.equal(plain.code, 0, `--without-timescaledb: exit code 0\n${plain.stderr}`);
  t.match(plain.stdout, /^applied 001_schema, 002_timescaledb, .*; measurements: plain PostgreSQL table\n$/);
  t.same(await sql`select 1 from pg_extension where extname = 'timescaledb'`, [], 'no extension created');

  const again = await runCli(['migrate'], { env });
  t.same(
    again,
    { code: 0, stdout: 'schema is up to date; measurements: plain PostgreSQL table\n', stderr: '' },
    'once recorded, a plain table is what it stays',
  );
});

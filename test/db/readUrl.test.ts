/**
 * DATABASE_READ_URL with a real `gwapi serve`: two databases stand for a primary and its read replica,
 * each holding what only it can answer, so every answer shows where it was read. Wells, tubes, series
 * and readiness come from the read database; keys from DATABASE_URL (a revocation must not wait for
 * replica lag); the other commands never use the read database.
 */
import t from 'tap';
import { freePort } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { addKey, addRegularSeries, addWell, revokeKey } from '../../testkit/fixtures.js';
import { startApi } from '../helpers/api.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';
import { get, type HttpResponse } from '../helpers/http.js';
import { startReplica } from '../helpers/serve.js';
import { until } from '../helpers/until.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const DAY = '?from=2024-06-01T00:00:00Z&to=2024-06-02T00:00:00Z';

const answer = (response: HttpResponse) => ({ status: response.status, body: response.body });

t.test('gwapi serve reads from DATABASE_READ_URL and looks keys up in DATABASE_URL', async (t) => {
  const primary = await freshDatabase(t);
  // The "replica" starts behind: it has not replayed the migrations yet.
  const reads = await freshDatabase(t, { migrated: false });
  // Keys only on the primary, wells only on the read database: nothing is answered from one database alone.
  const onPrimary = await addKey(primary.sql, { allTubes: true });
  const server = await startReplica(t, {
    DATABASE_URL: primary.url,
    DATABASE_READ_URL: reads.url,
    KEY_CACHE_SECONDS: '0',
  });
  const listening = server.logs.find((line) => line.msg === 'gwapi listening') as unknown as {
    database: string;
    reads: string;
  };
  t.same(
    { database: listening.database, reads: listening.reads },
    {
      database: 'DATABASE_URL',
      reads: 'DATABASE_READ_URL',
    },
  );

  await t.test('readiness checks the read database’s migrations', async (t) => {
    const behind = await get(server.base, '/health/ready');
    t.equal(behind.status, 503, 'not ready while the read database lacks a migration');
    const report = JSON.parse(behind.body);
    t.equal(report.checks.database.status, 'pass');
    t.match(report.checks.migrations, { status: 'fail', output: /not applied/ });
    await migrate(reads.sql);
    await until(
      'ready once the read database caught up',
      () => get(server.base, '/health/ready'),
      (r) => r.status === 200,
    );
  });

  const [tube] = await addWell(reads.sql, 'Only on the replica', [{ number: '1' }]);
  await addRegularSeries(reads.sql, tube!.id, '2024-06-01T00:00:00Z', '2024-06-02T00:00:00Z', '1 minute');
  // The same answers straight from the read database, with a key of its own.
  const onReads = await addKey(reads.sql, { allTubes: true });
  const direct = await startApi(t, { db: reads });
  const series = `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements${DAY}`;

  t.test('wells, tubes and series come from the read database', async (t) => {
    for (const path of [WELLS, series]) {
      const served = await get(server.base, path, { 'x-api-key': onPrimary.key });
      t.equal(served.status, 200, path);
      t.same(answer(served), answer(await get(direct.base, path, { 'x-api-key': onReads.key })), path);
    }
    t.equal(
      JSON.parse((await get(server.base, series, { 'x-api-key': onPrimary.key })).body).measurements.length,
      1440,
    );
  });

  t.test('keys come from DATABASE_URL only', async (t) => {
    const readOnlyKey = await get(server.base, WELLS, { 'x-api-key': onReads.key });
    t.equal(readOnlyKey.status, 401, 'a key that exists only in the read database is unknown');
    await revokeKey(primary.sql, onPrimary.keyId);
    const revoked = await get(server.base, WELLS, { 'x-api-key': onPrimary.key });
    t.equal(revoked.status, 401, 'a revocation on the primary counts at once, whatever the replica says');
  });

  t.test('each pool connects where it should', async (t) => {
    const sessions = await primary.sql<{ datname: string; application_name: string }[]>`
      select datname, application_name from pg_stat_activity
      where datname in (${primary.name}, ${reads.name}) and application_name like 'gwapi serve%'
      order by 1, 2`;
    const where = (name: string) => [
      ...new Set(sessions.filter((s) => s.datname === name).map((s) => s.application_name)),
    ];
    t.same(
      where(primary.name),
      ['gwapi serve', 'gwapi serve (replica monitor)'],
      'the primary: schema check, key lookups, and the WAL samples of the replica monitor',
    );
    t.same(
      where(reads.name),
      ['gwapi serve (reads)', 'gwapi serve (replica monitor)'],
      'the read database: the reads pool and its probe only',
    );
  });
});

t.test('other commands never use DATABASE_READ_URL', async (t) => {
  const primary = await freshDatabase(t);
  const nowhere = `postgres://gwapi:secret-password@127.0.0.1:${await freePort()}/gwapi`;
  const list = await runCli(['keys', 'list'], {
    env: { DATABASE_URL: primary.url, DATABASE_READ_URL: nowhere },
  });
  t.equal(list.code, 0, `keys list with a read URL that answers nothing: ${list.stderr}`);
});

t.test('a read database that cannot be reached stops gwapi serve, naming DATABASE_READ_URL', async (t) => {
  const primary = await freshDatabase(t);
  const port = await freePort();
  const served = await runCli(['serve'], {
    env: {
      DATABASE_URL: primary.url,
      DATABASE_READ_URL: `postgres://gwapi:secret-password@127.0.0.1:${port}/gwapi`,
      PORT: '0',
    },
  });
  t.equal(served.code, 1);
  t.equal(
    served.stderr.split('\n')[0],
    `gwapi: cannot connect to PostgreSQL at 127.0.0.1:${port} (DATABASE_READ_URL, database "gwapi"): ` +
      'connection refused.',
  );
  t.notMatch(served.stderr + served.stdout, /secret-password/);
});

t.test('DATABASE_READ_URL without DATABASE_URL is refused, without showing the URL', async (t) => {
  const nowhere = `postgres://gwapi:secret-password@127.0.0.1:${await freePort()}/gwapi`;
  const served = await runCli(['serve'], {
    env: { DATABASE_READ_URL: nowhere, GWAPI_DATA_DIR: t.testdirName, PORT: '0' },
  });
  t.not(served.code, 0);
  t.match(served.stderr, /DATABASE_READ_URL is a replica of DATABASE_URL: set DATABASE_URL too/);
  t.notMatch(served.stderr + served.stdout, /secret-password/);
});

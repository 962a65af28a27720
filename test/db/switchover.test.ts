/**
 * A multi-host DATABASE_URL through a switch-over of the primary, on real PostgreSQL 15 streaming
 * replication (testkit/replication.ts): the pool finds the primary wherever it is in the list, fails
 * fast and cheaply while there is none (postgres.js alone waits forever and opens sessions on the
 * standbys without pause), and follows the promoted standby. `gwapi serve` then keeps serving reads
 * and known keys from the standby, keeps a revoked key refused, and answers 503 with Retry-After, not
 * 500, for what no database can take.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { connect, type Sql } from '../../src/db/connect.js';
import { isDatabaseUnavailable } from '../../src/db/errorCodes.js';
import { retryIfConnectionLost } from '../../src/db/retry.js';
import { addKey, addWell, revokeKey } from '../../testkit/fixtures.js';
import { postgres15 } from '../../testkit/prerequisites.js';
import { startReplicationCluster } from '../../testkit/replication.js';
import { get } from '../helpers/http.js';
import { unlessInstalled } from '../helpers/installed.js';
import { startReplica } from '../helpers/serve.js';
import { until } from '../helpers/until.js';

const missing = unlessInstalled(postgres15);
const WELLS = '/v1/groundwater-monitoring-wells';

const sessionsOn = async (sql: Sql) =>
  Number((await sql<{ n: string }[]>`select sum(sessions)::text as n from pg_stat_database`)[0]!.n);

t.test(
  'a pool on every node finds the primary, fails fast without one, follows a promotion',
  {
    skip: missing,
  },
  async (t) => {
    const cluster = await startReplicationCluster({ standbys: 1, owner: t, migrated: false });
    const [standby] = cluster.standbys;
    // The standby first: a read-write session must skip it.
    const sql = connect(cluster.url([standby!, cluster.primary], { target_session_attrs: 'read-write' }), {
      max: 2,
    });
    t.teardown(() => sql.end({ timeout: 0 }));
    const where = async () =>
      (
        await sql<{ port: number; standby: boolean }[]>`
      select inet_server_port() as port, pg_is_in_recovery() as standby`
      )[0];
    t.same(await where(), { port: cluster.primary.port, standby: false }, 'the primary, listed second');

    await cluster.primary.stop('fast');
    const before = await standby!.query(sessionsOn);
    const failures: { ms: number; code: string; unavailable: boolean }[] = [];
    const started = performance.now();
    while (performance.now() - started < 2000) {
      const attempt = performance.now();
      try {
        await where();
        t.fail('a query answered without a primary');
      } catch (error) {
        failures.push({
          ms: performance.now() - attempt,
          code: (error as { code: string }).code,
          unavailable: isDatabaseUnavailable(error),
        });
      }
      await sleep(20);
    }
    // Less than the 1 s a request may wait for the whole answer; postgres.js alone never fails.
    t.ok(
      failures.every((f) => f.ms < 1000),
      `every query failed within ${Math.round(Math.max(...failures.map((f) => f.ms)))} ms`,
    );
    t.ok(
      failures.every((f) => f.unavailable),
      `each as "database unavailable": ${[...new Set(failures.map((f) => f.code))]}`,
    );
    // The standby's own admin session aside, a probe round at most every quarter second.
    const opened = (await standby!.query(sessionsOn)) - before;
    t.ok(opened <= 16, `${opened} sessions opened on the standby in 2 s of ${failures.length} queries`);

    await standby!.promote();
    const promotedAt = performance.now();
    await until(
      'the pool reaches the promoted standby',
      () => where().catch(() => undefined),
      (row) => row?.port === standby!.port,
    );
    t.ok(performance.now() - promotedAt < 5000, 'within 5 s of the promotion');
    t.same(await where(), { port: standby!.port, standby: false });
  },
);

t.test(
  'reads retried over a lost connection all settle, and on the new primary',
  {
    skip: missing,
  },
  async (t) => {
    const cluster = await startReplicationCluster({ standbys: 1, owner: t, migrated: false });
    const [standby] = cluster.standbys;
    const sql = connect(cluster.url(cluster.nodes, { target_session_attrs: 'read-write' }), { max: 10 });
    t.teardown(() => sql.end({ timeout: 0 }));
    // Many readers at once, as key lookups under load: some are in flight when the primary stops.
    let running = true;
    const lastAnswer: number[] = [];
    const readers = Array.from({ length: 20 }, async (_, i) => {
      while (running) {
        try {
          await retryIfConnectionLost(() => sql`select 1`);
          lastAnswer[i] = performance.now();
        } catch {
          // No primary for a moment: the next read tries again.
        }
        await sleep(Math.random() * 5);
      }
    });
    await sleep(500);
    await cluster.primary.stop('fast');
    await standby!.promote();
    const promotedAt = performance.now();
    await sleep(3000);
    running = false;
    // A retry handed to the connection being reset would wait forever: its reader never answers again.
    const stuck = lastAnswer.filter((at) => !(at > promotedAt + 1000)).length;
    t.equal(
      stuck,
      0,
      `every reader answered again within a second of the promotion: ${lastAnswer.map((at) => Math.round(at - promotedAt))}`,
    );
    // Those that are stuck never end: waited for only when none is.
    if (stuck === 0) await Promise.all(readers);
  },
);

t.test('gwapi serve through a switch-over of the primary', { skip: missing }, async (t) => {
  const cluster = await startReplicationCluster({ standbys: 1, owner: t });
  const [standby] = cluster.standbys;
  const { primary } = cluster;
  const { known, fresh, revoked, late } = await primary.query(async (sql) => {
    await addWell(sql, 'W1', [{ number: '1' }]);
    return {
      known: await addKey(sql, { allTubes: true }),
      fresh: await addKey(sql, { allTubes: true }),
      revoked: await addKey(sql, { allTubes: true }),
      late: await addKey(sql, { allTubes: true }),
    };
  });
  await cluster.caughtUp();
  const server = await startReplica(t, {
    DATABASE_URL: cluster.url(cluster.nodes, { target_session_attrs: 'read-write' }),
    DATABASE_READ_URL: standby!.url,
    KEY_CACHE_SECONDS: '1',
  });
  const wells = (key: string) => get(server.base, WELLS, { 'x-api-key': key });
  t.equal((await wells(known.key)).status, 200);
  t.equal((await wells(revoked.key)).status, 200, 'the key to revoke worked, and is cached');
  await primary.query((sql) => revokeKey(sql, revoked.keyId));
  await cluster.caughtUp();
  // Past KEY_CACHE_SECONDS: only a database can tell the key is revoked now.
  await sleep(1500);

  await primary.stop('fast');
  // Readiness reuses an answer for a second.
  const ready = await until(
    'readiness sees the primary gone',
    () => get(server.base, '/health/ready'),
    (r) => r.status !== 200 || JSON.parse(r.body).status !== 'pass',
  );
  t.equal(ready.status, 200, 'still ready: reads and keys go on from the standby');
  t.match(JSON.parse(ready.body).checks.database, { status: 'warn', output: /primary/ });
  t.equal((await wells(known.key)).status, 200, 'a known key, its cache expired: looked up on the standby');
  t.equal((await wells(fresh.key)).status, 200, 'a key never used before too');
  t.equal((await wells(revoked.key)).status, 401, 'the revoked key stays refused');

  await standby!.stop('fast');
  const none = await wells(late.key);
  t.equal(none.status, 503, 'no database at all: 503, not 500');
  t.equal(none.headers['retry-after'], '1');
  t.match(none.headers['content-type'], /^application\/problem\+json/);

  await standby!.start();
  await standby!.promote();
  await until(
    'whole again',
    () => get(server.base, '/health/ready'),
    (r) => r.status === 200 && JSON.parse(r.body).status === 'pass',
  );
  t.equal((await wells(known.key)).status, 200);
  t.equal((await wells(revoked.key)).status, 401, 'and on the new primary');
});

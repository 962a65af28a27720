/**
 * /health/live and /health/ready over real HTTP: outside /v1, no key, no limits, cheap; readiness fails
 * for a database that does not answer, a full pool, an old schema and a shutdown, and only warns
 * about Redis. (Readiness during a real shutdown: shutdown.test.ts.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { freePort } from '../../src/db/embedded.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { generateApiKey } from '../../src/keys/format.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { startRedis } from '../../testkit/redis.js';
import { startApi, type TestApi } from '../helpers/api.js';
import { freshDatabase } from '../helpers/database.js';
import { get, type HttpResponse, send } from '../helpers/http.js';
import { limitsOnOwnRedis, recordingLogger, settingsWith } from '../helpers/limits.js';
import { scriptedLimits } from '../helpers/scriptedLimits.js';
import { until } from '../helpers/until.js';

const LIVE = '/health/live';
const READY = '/health/ready';

/** The readiness answer, with its report parsed; checks the headers every health answer carries. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON document, checked field by field
async function readiness(t: Test, api: TestApi): Promise<HttpResponse & { report: any }> {
  const response = await get(api.base, READY);
  t.equal(response.headers['api-version'], '1.4.0');
  t.equal(response.headers['content-type'], 'application/json');
  t.equal(response.headers['cache-control'], 'no-store');
  return { ...response, report: JSON.parse(response.body) };
}

t.test('liveness: 200 with no I/O, no key and no limits; HEAD too; other methods 405', async (t) => {
  const limits = scriptedLimits();
  limits.refuseFailedAuth(30);
  const api = await startApi(t, { limits });
  for (const headers of [{}, { 'x-api-key': generateApiKey() }] as Record<string, string>[]) {
    const response = await get(api.base, LIVE, headers);
    t.equal(response.status, 200);
    t.same(JSON.parse(response.body), { status: 'pass' });
    t.equal(response.headers['api-version'], '1.4.0');
    t.equal(response.headers['cache-control'], 'no-store');
  }
  const head = await send(api.base, 'HEAD', LIVE);
  t.equal(head.status, 200);
  t.equal(head.body, '');
  t.equal(head.headers['api-version'], '1.4.0');
  for (const path of [LIVE, READY]) {
    for (const method of ['POST', 'DELETE', 'PURGE']) {
      const refused = await send(api.base, method, path);
      t.equal(refused.status, 405, `${method} ${path}`);
      t.equal(refused.headers.allow, 'GET, HEAD');
      t.equal(refused.headers['content-type'], 'application/problem+json');
      t.equal(refused.headers['api-version'], '1.4.0');
    }
  }
  t.same(limits.admitted, [], 'no client admission');
  t.same(limits.failedAuth, [], 'no failed-auth counting, even with a bad key');
  t.notOk(
    api.logLines.some((line) => line.includes('"/health/')),
    'no request log line per check (a load balancer checks every few seconds)',
  );
});

t.test('readiness passes on a current database, saying how limits are kept', async (t) => {
  const lifted = await startApi(t);
  const answer = await readiness(t, lifted);
  t.equal(answer.status, 200);
  t.same(answer.report, {
    status: 'pass',
    checks: {
      database: { status: 'pass' },
      migrations: { status: 'pass' },
      redis: { status: 'pass', output: 'not used: client limits are lifted' },
      shutdown: { status: 'pass' },
    },
  });
  const head = await send(lifted.base, 'HEAD', READY);
  t.equal(head.status, 200);
  t.equal(head.body, '');

  const limits = await createClientLimits(settingsWith(), { logger: recordingLogger() });
  const inProcess = await startApi(t, { limits, db: lifted.db });
  const report = (await readiness(t, inProcess)).report;
  t.same(report.checks.redis, {
    status: 'pass',
    output: 'not used: REDIS_URL is not set, limits are kept in this process',
  });
});

t.test('a database that does not answer: 503, and the body names no address or driver error', async (t) => {
  const port = await freePort();
  const api = await startApi(t, { databaseUrl: `postgres://gwapi@127.0.0.1:${port}/gwapi` });
  const answer = await readiness(t, api);
  t.equal(answer.status, 503);
  t.equal(answer.report.status, 'fail');
  t.same(answer.report.checks.database, { status: 'fail', output: 'not reachable' });
  t.same(answer.report.checks.migrations, {
    status: 'fail',
    output: 'not checked: the database does not answer',
  });
  for (const leak of [String(port), '127.0.0.1', 'ECONNREFUSED', 'gwapi@']) {
    t.notOk(answer.body.includes(leak), `no "${leak}" in the body`);
  }
  const logged = api.logLines.map((line) => JSON.parse(line)).find((line) => line.msg === 'not ready');
  t.match(logged, {
    level: 40,
    failing: ['database: not reachable', /^migrations: /],
    reason: /ECONNREFUSED/,
  });
  t.equal((await send(api.base, 'HEAD', READY)).status, 503, 'HEAD says the same');
  t.equal((await get(api.base, LIVE)).status, 200, 'the process itself is alive');
});

t.test('a pool that stays full: 503 after a second, one query however often it is asked', async (t) => {
  const api = await startApi(t, { poolMax: 1 });
  t.equal((await readiness(t, api)).status, 200);
  // Readiness's own queries: the ones of the transaction below do not count.
  let statements = 0;
  api.appSql.options.debug = (_connection, query) => {
    if (query.trim() === 'select 1') statements++;
  };
  t.teardown(() => {
    api.appSql.options.debug = undefined as never;
  });

  // Twenty checks within the second a database answer is reused for: at most one query.
  const started = performance.now();
  for (let i = 0; i < 20; i++) await get(api.base, READY);
  const seconds = (performance.now() - started) / 1000;
  t.ok(
    statements <= Math.ceil(seconds) + 1,
    `${statements} queries for 20 checks in ${seconds.toFixed(2)} s`,
  );
  await sleep(1100);

  // The pool's only connection is taken, as a stream would take it.
  let release = () => {};
  const held = api.appSql.begin(() => new Promise<void>((resolve) => (release = resolve)));
  await sleep(100);
  statements = 0;
  const checkStarted = performance.now();
  const answers = await Promise.all(Array.from({ length: 5 }, () => get(api.base, READY)));
  const waitedMs = performance.now() - checkStarted;
  for (const answer of answers) {
    t.equal(answer.status, 503);
    t.same(JSON.parse(answer.body).checks.database, { status: 'fail', output: 'no answer within 1000 ms' });
  }
  t.ok(waitedMs < 2000, `answered after ${waitedMs.toFixed(0)} ms, not when the pool frees up`);
  release();
  await held;
  await sleep(200);
  t.equal(statements, 1, 'five checks sent one query to the pool');
  const recovered = await until(
    'ready again',
    () => get(api.base, READY),
    (answer) => answer.status === 200,
  );
  t.equal(JSON.parse(recovered.body).status, 'pass');
});

t.test(
  'an old schema: 503 naming what to run, then ready once migrated, and not checked again',
  async (t) => {
    const db = await freshDatabase(t, { migrated: false });
    const api = await startApi(t, { db });
    const migrations = await readMigrations();
    const before = await readiness(t, api);
    t.equal(before.status, 503);
    t.same(before.report.checks.migrations, {
      status: 'fail',
      output: `${migrations.length} not applied: run gwapi migrate`,
    });
    t.equal(before.report.checks.database.status, 'pass');

    await migrate(db.sql);
    const after = await readiness(t, api);
    t.equal(after.status, 200);
    t.equal(after.report.status, 'pass');
    // Checked once it passed, then remembered: not a query per check for the life of the process.
    await db.sql`delete from schema_migrations`;
    await sleep(1100);
    t.equal((await readiness(t, api)).report.checks.migrations.status, 'pass');
  },
);

t.test(
  'Redis: pass while shared, a warning (still 200) while it is down, pass again when back',
  async (t) => {
    const { redis, limits } = await limitsOnOwnRedis(t, 'health:');
    const api = await startApi(t, { limits });

    const shared = await readiness(t, api);
    t.equal(shared.status, 200);
    t.same(shared.report.checks.redis, { status: 'pass' });

    await redis.stop();
    const down = await until(
      'Redis is reported down',
      () => readiness(t, api),
      (answer) => answer.report.checks.redis.status !== 'pass',
    );
    t.equal(down.status, 200, 'still ready: requests are served with limits kept in this process');
    t.equal(down.report.status, 'warn');
    t.match(down.report.checks.redis, { status: 'warn', output: /limits clients on its own/ });
    const degraded = api.logLines
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'ready, degraded');
    t.match(degraded, { level: 40, failing: [/^redis: /] }, 'the change is logged once');

    const again = await startRedis(redis.port);
    t.teardown(() => again.stop());
    const back = await until(
      'Redis is reported back',
      () => readiness(t, api),
      (answer) => answer.report.checks.redis.status === 'pass',
    );
    t.equal(back.report.status, 'pass');
  },
);

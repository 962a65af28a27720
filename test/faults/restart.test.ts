/**
 * PostgreSQL restarted under an idle service: the pool's connections all die at once (57P01), and the
 * replica must serve the next requests without being restarted itself. While the database is down,
 * every request is answered at once with a 5xx problem, never left hanging.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { VERSION_FRESH_MS } from '../../src/v1/wells/discoveryCache.js';
import { seriesPath, WELLS_PATH } from '../../testkit/apiPaths.js';
import {
  describe,
  fetchOutcome,
  isServerProblem,
  type Outcome,
  RECOVERED_WITHIN_MS,
  startFaultReplica,
} from '../../testkit/faults.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { startOwnPostgres } from '../../testkit/postgres.js';

t.test('PostgreSQL restarted while the service is idle', async (t) => {
  const pg = await startOwnPostgres(t);
  const [tube] = await addWell(pg.admin, 'Well', [{ number: '1' }]);
  await addRegularSeries(pg.admin, tube!.id, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z', '1 minute');
  const warmKeys = await Promise.all(Array.from({ length: 5 }, () => addKey(pg.admin, { allTubes: true })));
  const replica = await startFaultReplica(t, pg.url);
  const series = seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z');
  const get = (path: string, key: string) => fetchOutcome(replica.base, path, { 'x-api-key': key });

  // Fill the pool: two series per key at once, so the pool holds many connections, all of them to die.
  const warm = await Promise.all(warmKeys.flatMap(({ key }) => [get(series, key), get(series, key)]));
  t.ok(
    warm.every((o) => o.status === 200 && o.complete),
    'warm-up served',
  );
  const [{ pooled }] = await pg.admin<[{ pooled: number }]>`
    select count(*)::int as pooled from pg_stat_activity where application_name = 'gwapi serve'`;
  t.ok(pooled >= 5, `the replica's pool holds ${pooled} connections`);

  await pg.restart();
  const back = performance.now();
  // A key the replica has never seen: its lookup is a query on a new connection too.
  const { key: freshKey } = await pg.query((sql) => addKey(sql, { allTubes: true }));
  const requests: [string, () => Promise<Outcome>][] = [
    ['discovery', () => get(WELLS_PATH, warmKeys[3]!.key)],
    ['series', () => get(series, warmKeys[4]!.key)],
    ['a key not yet cached', () => get(WELLS_PATH, freshKey)],
  ];
  const outcomes: { name: string; outcome: Outcome }[] = [];
  for (const [name, send] of requests) {
    for (;;) {
      const outcome = await send();
      outcomes.push({ name, outcome });
      if (outcome.status === 200 && outcome.complete) break;
      if (performance.now() - back > RECOVERED_WITHIN_MS) break;
    }
  }
  const recoveredMs = performance.now() - back;
  const failures = outcomes.filter(({ outcome }) => outcome.status !== 200 || !outcome.complete);
  t.comment(
    `after restart: ${outcomes.length} requests, ${failures.length} failed, all kinds served within ${Math.round(recoveredMs)} ms: ` +
      outcomes
        .slice(0, 5)
        .map(({ name, outcome }) => `${name} ${describe(outcome)}`)
        .join('; '),
  );
  // What the replica said about any failure: errors are the thing to read when this test fails.
  if (failures.length > 0) t.comment(JSON.stringify(replica.logs.filter((l) => l.level >= 40).slice(0, 3)));
  t.ok(recoveredMs < RECOVERED_WITHIN_MS, `served again ${Math.round(recoveredMs)} ms after the restart`);
  t.same(
    failures.map(({ name, outcome }) => `${name}: ${describe(outcome)}`),
    [],
    'no request failed',
  );
  t.equal(replica.child.exitCode, null, 'the replica was not restarted');

  t.test('while it is down, each request gets a 5xx problem at once; then all is served', async (t) => {
    await pg.stop();
    // Within VERSION_FRESH_MS of its last version read a cached discovery body is served without the
    // database; past it, discovery needs the database like everything else.
    await sleep(VERSION_FRESH_MS);
    const whileDown = await Promise.all(requests.map(([, send]) => send()));
    for (const outcome of whileDown) {
      t.ok(isServerProblem(outcome), `a 5xx problem while down: ${describe(outcome)}`);
      // connect() is refused at once; within connect_timeout (10 s) even if it were not.
      t.ok(outcome.ms < 1000, `answered in ${Math.round(outcome.ms)} ms`);
    }
    await pg.start();
    for (const [name, send] of requests) {
      const outcome = await send();
      t.ok(outcome.status === 200 && outcome.complete, `${name} once it is back: ${describe(outcome)}`);
    }
  });
});

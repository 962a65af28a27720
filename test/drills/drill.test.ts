/**
 * The rolling-restart and crash drill (testkit/drills/rollingDrill.ts), shortened: three real `gwapi serve`
 * replicas behind Debian's HAProxy running deploy/haproxy.cfg, the suite's PostgreSQL, a Redis of its
 * own, a steady load from many keys. Each replica restarted with SIGTERM under load loses no request
 * and finishes the stream it was sending;
 * a replica killed with SIGKILL is taken out within HAProxy's check interval, fails only requests in
 * flight on it, and its concurrency slots come back within the lease. `npm run drill` is the long run.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { addDrillFixture } from '../../testkit/drills/drillFixture.js';
import { HAPROXY_CONFIG, localConfig } from '../../testkit/drills/haproxy.js';
import { checkTiming, runDrill } from '../../testkit/drills/rollingDrill.js';
import { captureProcess } from '../../testkit/outputCapture.js';
import { startRedis } from '../../testkit/redis.js';
import { freshDatabase } from '../helpers/database.js';
import { unlessInstalled } from '../helpers/installed.js';

const noHaproxy = unlessInstalled('haproxy', 'haproxy');
const source = await readFile(HAPROXY_CONFIG, 'utf8');
const addresses = {
  port: 18080,
  monitorPort: 18404,
  adminPort: 18405,
  servers: [
    { name: 'api1', port: 13001 },
    { name: 'api2', port: 13002 },
  ],
};

t.test('the drill runs deploy/haproxy.cfg with only its addressing changed', async (t) => {
  const local = localConfig(source, addresses).split('\n');
  // Docker's DNS: the resolvers section, up to the next line that is neither indented nor blank.
  const withoutResolvers = source.replace(/^resolvers [^\n]*\n(?:(?:[ \t][^\n]*)?\n)*/m, '');
  const addressing = (line: string) => /^\s*(bind|server-template|default-server) /.test(line);
  const kept = withoutResolvers.split('\n').filter((line) => !addressing(line));
  t.same(
    local.filter((line) => kept.includes(line)),
    kept,
    'every other line of the file, in its order',
  );
  t.same(
    local.filter((line) => !kept.includes(line)),
    [
      '  stats socket ipv4@127.0.0.1:18405 level admin',
      '  bind 127.0.0.1:18080',
      source
        .match(/^\s*default-server .*$/m)![0]
        .replace(/ resolvers docker| resolve-prefer ipv4| init-addr \S+/g, ''),
      '  server api1 127.0.0.1:13001',
      '  server api2 127.0.0.1:13002',
      '  bind 127.0.0.1:18404',
    ],
    'and only these lines new',
  );
  t.same(checkTiming(source), { interMs: 2000, fall: 2, rise: 2 }, 'check timing read from the file');
});

t.test('HAProxy accepts the local configuration', { skip: noHaproxy }, async (t) => {
  const file = join(t.testdir(), 'haproxy.cfg');
  await writeFile(file, localConfig(source, addresses));
  const check = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
  t.equal(check.status, 0, check.stdout + check.stderr);
});

t.test('rolling restart and crash under load', { skip: noHaproxy }, async (t) => {
  const db = await freshDatabase(t);
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const fixture = await addDrillFixture(db.sql, { keys: 24, holders: 2 });
  const report = await runDrill(
    {
      databaseUrl: db.url,
      redisUrl: redis.url,
      fixture,
      folder: t.testdir(),
      settleMs: 2000,
      throughputMs: 1500,
      periodMs: 500,
      owner: t,
      watch: captureProcess,
    },
    source,
  );
  t.same(report.problems, [], 'nothing that must hold was broken');

  for (const { phase, requests, drained } of report.phases) {
    t.ok(requests.length > 0, `${phase}: ${requests.length} requests`);
    if (phase.startsWith('SIGTERM')) {
      t.ok(drained?.whole || drained?.retriedOk, `${phase}: the stream running at the signal was served`);
      t.same(
        requests.filter((r) => r.outcome === 'failed' && r.cause !== 'cut off'),
        [],
        `${phase}: no request failed`,
      );
    }
  }
  const { kill } = report;
  t.equal(kill.failedStartedAfter, 0, 'no request begun after the kill failed');
  t.ok(kill.failed <= kill.inFlight, `${kill.failed} failed of ${kill.inFlight} in flight at the kill`);
  const { interMs, fall } = checkTiming(source);
  t.ok(kill.downAfterMs <= interMs * fall + 1000, `taken out after ${Math.round(kill.downAfterMs)} ms`);
  t.ok(kill.held > 0 && kill.cut === kill.held, `${kill.cut} of ${kill.held} held streams cut`);
  t.ok(kill.slotsRefused > 0, 'the slots stayed held until their lease ran out');
  t.ok(kill.slotsInRedisAtKill > 0, `Redis counted ${kill.slotsInRedisAtKill} slots at the kill`);
  t.ok(
    kill.slotsFreeInRedisAfterMs <= kill.leaseMs + 1000,
    `their leases ran out after ${Math.round(kill.slotsFreeInRedisAfterMs)} ms`,
  );
  t.equal(kill.otherServersErrors, 0, 'no error on the replicas not killed');
  t.ok(
    kill.slotsBackAfterMs <= kill.leaseMs + 2500,
    `slots back after ${Math.round(kill.slotsBackAfterMs)} ms`,
  );
  t.same(
    report.throughput.map((run) => run.replicas),
    [1, 2, 3],
  );
  for (const run of report.throughput) t.ok(run.requests.length > 0, `${run.replicas} replicas served`);
});

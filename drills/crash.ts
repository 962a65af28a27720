/**
 * Crash drill (testkit/drills/crashDrill.ts) with its report, once with Patroni's synchronous_mode off and
 * once on, each on a Patroni cluster of its own (etcd and three PostgreSQL 15 nodes run by Patroni with
 * deploy/patroni/patroni.yml), API replicas behind Debian's HAProxy, one Redis, the switch-over
 * drill's load. The leader's Patroni and PostgreSQL get SIGKILL together. Before that, on the first
 * cluster, import speed with synchronous_mode off and on. Exit code 0 on PASS, 1 on FAIL, 2 when
 * something it needs is not installed.
 *
 *   npm run crash [-- SETTLE_SECONDS [TTL LOOP_WAIT [LAG_MS [API_REPLICAS]]]]
 *   (defaults 20, patroni.yml's ttl and loop_wait (30 and 10), 0, 3; REDIS_URL, or a throwaway
 *   redis-server). LAG_MS: the standbys receive nothing for that long before the crash; 0 for none.
 */
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { exitWithUsage, numberArguments } from '../testkit/arguments.js';
import {
  configureCluster,
  measureImportSpeed,
  runCrashDrill,
  startCrashCluster,
} from '../testkit/drills/crashDrill.js';
import { bootstrapSettings } from '../testkit/patroni.js';
import { throwawayFolder } from '../testkit/postgres.js';
import {
  etcd,
  haproxy,
  patroni,
  postgres15,
  requirePrerequisites,
  throwawayRedis,
} from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { machineLine, printTable } from '../testkit/report.js';
import { describeCrash, describeImportSpeed } from './lib/crashReport.js';
import { describeProbedPhases } from './lib/primaryReport.js';

requirePrerequisites([patroni, etcd, postgres15, haproxy, throwawayRedis]);

/** patroni.yml's, which each cluster starts with. */
const bootstrap = bootstrapSettings();

const [settleSeconds, ttl, loopWait, lagMs, apiReplicas] = numberArguments(
  20,
  bootstrap.ttl,
  bootstrap.loopWait,
  0,
  3,
);
const valid =
  settleSeconds > 0 &&
  loopWait >= 1 &&
  ttl > loopWait &&
  lagMs >= 0 &&
  Number.isInteger(apiReplicas) &&
  apiReplicas >= 1;
if (!valid)
  exitWithUsage(
    'crash.ts [SETTLE_SECONDS [TTL LOOP_WAIT [LAG_MS [API_REPLICAS]]]], with TTL > LOOP_WAIT ≥ 1',
  );
// Patroni's rule: loop_wait + 2 × retry_timeout ≤ ttl.
const retryTimeout = Math.min(bootstrap.retryTimeout, Math.floor((ttl - loopWait) / 2));
const KEYS = 40;
const PERIOD_MS = 500;
const SPEED_RUNS = [
  { rows: 10, imports: 100 },
  { rows: 10_000, imports: 5 },
];

const redis = await redisOrThrowaway(process.env.REDIS_URL);
let failed = false;
try {
  const haproxyVersion = execFileSync('haproxy', ['-v'], { encoding: 'utf8' }).split('\n')[0];
  const patroniVersion = execFileSync('patroni', ['--version'], { encoding: 'utf8' }).trim();
  console.log(`Crash drill — ${await machineLine()}`);
  console.log(
    `${patroniVersion}, etcd and 3 PostgreSQL 15 nodes each run by Patroni with deploy/patroni/patroni.yml; ` +
      `Redis at ${redis.url}; ${haproxyVersion}`,
  );
  console.log(
    `${apiReplicas} API replicas; DATABASE_URL names the 3 nodes (target_session_attrs=read-write), ` +
      `DATABASE_READ_URL the 2 standbys; load: ${KEYS} keys, each a request every ${PERIOD_MS} ms (±20 %), a third ` +
      `discovery, the rest 30-day series; beside it a never-used key every 200 ms, an import every 250 ms, ` +
      `a revoked key every 250 ms, and the import tube's document read from the primary every 500 ms for its ` +
      `sync token; ${settleSeconds} s before the crash and after the service is whole; ` +
      `${lagMs > 0 ? `the primary's WAL senders held for ${lagMs} ms before the crash; ` : ''}` +
      `ttl ${ttl} s, loop_wait ${loopWait} s, retry_timeout ${retryTimeout} s\n`,
  );
  for (const synchronousMode of [false, true]) {
    const settings = { synchronousMode, ttl, loopWait, retryTimeout };
    const { cluster, fixture } = await startCrashCluster({
      keys: KEYS,
      settleMs: settleSeconds * 1000,
      settings,
    });
    const folder = await throwawayFolder('gwapi-crash-');
    try {
      let loopWaitNow = bootstrap.loopWait;
      if (!synchronousMode) {
        // Import speed on a quiet cluster, each mode twice in turn.
        const speeds = [];
        const databaseUrl = cluster.url({ target_session_attrs: 'read-write' });
        let from = Date.parse('2040-01-01T00:00:00Z');
        for (const speedMode of [false, true, false, true]) {
          await configureCluster(cluster, { ...settings, synchronousMode: speedMode }, loopWaitNow);
          loopWaitNow = loopWait;
          for (const run of SPEED_RUNS) {
            speeds.push(
              await measureImportSpeed(databaseUrl, fixture.importTube, speedMode, {
                ...run,
                from: new Date(from).toISOString(),
              }),
            );
            from += run.rows * run.imports * 60_000;
          }
        }
        console.log('Import speed, one import after the other, on the quiet cluster:');
        const speedTable = describeImportSpeed(speeds);
        printTable(speedTable.header, speedTable.rows);
        console.log();
      }
      await configureCluster(cluster, settings, loopWaitNow);
      console.log(`synchronous_mode: ${synchronousMode}`);
      const report = await runCrashDrill({
        cluster,
        redisUrl: redis.url,
        fixture,
        replicas: apiReplicas,
        folder,
        settleMs: settleSeconds * 1000,
        periodMs: PERIOD_MS,
        settings,
        lagMs,
        log: (line) => console.error(`  … ${line}`),
      });
      const { phases, kinds } = describeProbedPhases(report.phases);
      const { timeline, tokens } = describeCrash(report);
      printTable(phases.header, phases.rows);
      console.log();
      console.log(timeline);
      console.log();
      printTable(kinds.header, kinds.rows);
      console.log();
      printTable(tokens.header, tokens.rows);
      for (const problem of report.problems) console.log(`problem: ${problem}`);
      console.log(`synchronous_mode ${synchronousMode}: ${report.problems.length === 0 ? 'PASS' : 'FAIL'}\n`);
      failed ||= report.problems.length > 0;
    } finally {
      await cluster.stop();
      await rm(folder, { recursive: true, force: true });
    }
  }
  console.log(failed ? 'FAIL' : 'PASS');
} finally {
  await redis.stop();
}
process.exit(failed ? 1 : 0);

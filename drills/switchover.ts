/**
 * Primary switch-over drill (testkit/drills/switchoverDrill.ts) with its report: a PostgreSQL 15 primary
 * and two streaming standbys (Debian's binaries), API replicas behind Debian's HAProxy running
 * deploy/haproxy.cfg, one Redis, the rolling drill's load, and what needs the primary beside it. The
 * primary is stopped, a standby promoted, the other made to follow it. Exit code 0 on PASS, 1 on FAIL,
 * 2 when something it needs is not installed.
 *
 *   npm run switchover [-- SETTLE_SECONDS [API_REPLICAS]]   (defaults 20 and 3)
 *   (REDIS_URL, or a throwaway redis-server)
 */
import { execFileSync } from 'node:child_process';
import { exitWithUsage, numberArguments } from '../testkit/arguments.js';
import { addDrillFixture } from '../testkit/drills/drillFixture.js';
import { addProbeFixture, freshKeysFor } from '../testkit/drills/primaryProbes.js';
import { runSwitchoverDrill, type SwitchoverReport } from '../testkit/drills/switchoverDrill.js';
import { throwawayFolder } from '../testkit/postgres.js';
import { haproxy, postgres15, requirePrerequisites, throwawayRedis } from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { startReplicationCluster } from '../testkit/replication.js';
import { machineLine, printTable } from '../testkit/report.js';
import { describeSwitchover } from './lib/primaryReport.js';
import { exitWithVerdict } from './lib/verdict.js';

requirePrerequisites([haproxy, throwawayRedis, postgres15]);

const [settleSeconds, apiReplicas] = numberArguments(20, 3);
if (!(settleSeconds > 0 && Number.isInteger(apiReplicas) && apiReplicas >= 1))
  exitWithUsage('switchover.ts [SETTLE_SECONDS [API_REPLICAS]], a positive number and a count');
const KEYS = 40;
const PERIOD_MS = 500;

const cluster = await startReplicationCluster({ standbys: 2, migrated: true });
const redis = await redisOrThrowaway(process.env.REDIS_URL);
const folder = await throwawayFolder('gwapi-switchover-');
let report: SwitchoverReport | undefined;
try {
  const haproxyVersion = execFileSync('haproxy', ['-v'], { encoding: 'utf8' }).split('\n')[0];
  console.log(`Primary switch-over drill — ${await machineLine()}`);
  console.log(
    `PostgreSQL 15: a primary and 2 streaming standbys (${cluster.nodes.map((n) => `${n.name} :${n.port}`).join(', ')}); ` +
      `Redis at ${redis.url}; ${haproxyVersion}`,
  );
  const fixture = await cluster.primary.query(async (sql) => {
    const drill = await addDrillFixture(sql, { keys: KEYS, holders: 0 });
    return { ...drill, ...(await addProbeFixture(sql, drill, freshKeysFor(settleSeconds * 1000))) };
  });
  await cluster.caughtUp();
  console.log(
    `${apiReplicas} API replicas; DATABASE_URL names the 3 nodes (target_session_attrs=read-write), ` +
      `DATABASE_READ_URL the 2 standbys; load: ${KEYS} keys, each a request every ${PERIOD_MS} ms (±20 %), a third ` +
      `discovery, the rest 30-day series; beside it a never-used key every 200 ms, an import every 250 ms, ` +
      `a revoked key every 250 ms; ${settleSeconds} s before the switch and after the service is whole\n`,
  );
  report = await runSwitchoverDrill({
    cluster,
    redisUrl: redis.url,
    fixture,
    replicas: apiReplicas,
    folder,
    settleMs: settleSeconds * 1000,
    periodMs: PERIOD_MS,
    log: (line) => console.error(`  … ${line}`),
  });
  const { phases, kinds, timeline } = describeSwitchover(report);
  printTable(phases.header, phases.rows);
  console.log();
  console.log(timeline);
  console.log();
  printTable(kinds.header, kinds.rows);
} finally {
  await cluster.stop();
  await redis.stop();
}
exitWithVerdict(report!.problems);

/**
 * Rolling restart and crash drill (testkit/drills/rollingDrill.ts), then a migration under load
 * (testkit/drills/migrationDrill.ts), with their reports: three `gwapi serve`
 * replicas behind Debian's HAProxy running deploy/haproxy.cfg, one PostgreSQL, one Redis, a steady load
 * from many keys. Exit code 0 on PASS, 1 on FAIL.
 *
 *   npm run drill [-- SETTLE_SECONDS [THROUGHPUT_SECONDS]]   (defaults 20 and 10)
 *   (DATABASE_URL and REDIS_URL, or a throwaway embedded PostgreSQL and redis-server)
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { exitWithUsage, numberArguments } from '../testkit/arguments.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { addDrillFixture } from '../testkit/drills/drillFixture.js';
import { describeReport } from '../testkit/drills/drillReport.js';
import { HAPROXY_CONFIG } from '../testkit/drills/haproxy.js';
import { printedMigrationDrill } from '../testkit/drills/migrationDrill.js';
import { type DrillReport, runDrill } from '../testkit/drills/rollingDrill.js';
import { throwawayFolder } from '../testkit/postgres.js';
import {
  git,
  haproxy,
  requirePrerequisites,
  throwawayPostgres,
  throwawayRedis,
} from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { machineLine, printTable } from '../testkit/report.js';
import { exitWithVerdict } from './lib/verdict.js';

requirePrerequisites([haproxy, git, throwawayRedis, throwawayPostgres]);

const [settleSeconds, throughputSeconds] = numberArguments(20, 10);
if (!(settleSeconds > 0 && throughputSeconds > 0))
  exitWithUsage('drill.ts [SETTLE_SECONDS [THROUGHPUT_SECONDS]], positive numbers');
const KEYS = 40;
const HOLDERS = 4;
const PERIOD_MS = 500;

const pg = await startDatabaseServer();
const redis = await redisOrThrowaway(process.env.REDIS_URL);
const folder = await throwawayFolder('gwapi-drill-');
let report: DrillReport | undefined;
try {
  const haproxyVersion = execFileSync('haproxy', ['-v'], { encoding: 'utf8' }).split('\n')[0];
  console.log(`Rolling restart and crash drill — ${await machineLine()}`);
  console.log(`${pg.description}; Redis at ${redis.url}; ${haproxyVersion}`);
  const { url, sql } = await pg.database('drill');
  const fixture = await addDrillFixture(sql, { keys: KEYS, holders: HOLDERS });
  console.log(
    `3 replicas; load: ${KEYS} keys, each a request every ${PERIOD_MS} ms (±20 %), a third discovery ` +
      `(${fixture.wells} wells), the rest 30-day series of 10-minute data; ${settleSeconds} s before the first ` +
      `step and after each\n`,
  );
  report = await runDrill(
    {
      databaseUrl: url,
      redisUrl: redis.url,
      fixture,
      folder,
      settleMs: settleSeconds * 1000,
      throughputMs: throughputSeconds * 1000,
      periodMs: PERIOD_MS,
      log: (line) => console.error(`  … ${line}`),
    },
    await readFile(HAPROXY_CONFIG, 'utf8'),
  );
  const { phases, kill, throughput } = describeReport(report);
  printTable(phases.header, phases.rows);
  console.log(kill);
  console.log();
  printTable(throughput.header, throughput.rows);
  report.problems.push(
    ...(await printedMigrationDrill(pg, {
      redisUrl: redis.url,
      folder,
      settleMs: settleSeconds * 1000,
      periodMs: PERIOD_MS,
      keys: KEYS,
      log: (line) => console.error(`  … ${line}`),
    })),
  );
} finally {
  await pg.stop();
  await redis.stop();
}
exitWithVerdict(report!.problems);

/**
 * Fairness drill: small requests beside heavy keys (testkit/drills/fairnessDrill.ts). One `gwapi serve`
 * with its default limits (kept in Redis) and pool, a network of WELLS × 4 tubes with a year of
 * 15-minute data; SECONDS alone, then as long beside the heavy keys. PASS when no small request fails
 * and their p99 beside the heavy keys is at most twice their p99 alone. Exit code 0 on PASS, 1 on FAIL,
 * 2 when something it needs is missing.
 *
 *   npm run fairness [-- SECONDS [WELLS]]   (defaults 60 and 50)
 *   (DATABASE_URL, or an embedded PostgreSQL; REDIS_URL, or a throwaway redis-server; BULK_CONNECTIONS
 *   is passed on to the server when set)
 */
import { exitWithUsage, numberArguments } from '../testkit/arguments.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import {
  addFairnessFixture,
  printFairnessReport,
  runFairnessDrill,
} from '../testkit/drills/fairnessDrill.js';
import { spawnReplica } from '../testkit/gwapi.js';
import { requirePrerequisites, throwawayPostgres, throwawayRedis } from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { count, loadLine, machineLine } from '../testkit/report.js';

requirePrerequisites([throwawayPostgres, throwawayRedis]);

const [seconds, wells] = numberArguments(60, 50);
if (!(seconds > 0 && Number.isInteger(wells) && wells >= 50))
  exitWithUsage('fairness.ts [SECONDS [WELLS]], a positive number and at least 50 wells (200 tubes)');
const METRICS_PORT = 20_000 + Math.floor(Math.random() * 20_000);

console.log(`Fairness drill — ${await machineLine()}`);
const pg = await startDatabaseServer();
const redis = await redisOrThrowaway(process.env.REDIS_URL);
let passed = false;
try {
  const { url, sql } = await pg.database('drill_fairness');
  const started = performance.now();
  const fixture = await addFairnessFixture(sql, { wells, stepMinutes: 15 });
  console.log(
    `${pg.description}; Redis at ${redis.url}; a network of ${count(fixture.tubes.length)} tubes, ` +
      `${count(fixture.rows)} rows (written in ${((performance.now() - started) / 1000).toFixed(0)} s); ` +
      `default limits and pool${process.env.BULK_CONNECTIONS ? `, BULK_CONNECTIONS=${process.env.BULK_CONNECTIONS}` : ''}; ${seconds} s alone, then ${seconds} s beside the heavy keys\n`,
  );
  const server = await spawnReplica(
    {
      DATABASE_URL: url,
      REDIS_URL: redis.url,
      METRICS_PORT: String(METRICS_PORT),
      BULK_CONNECTIONS: process.env.BULK_CONNECTIONS,
    },
    { keepLogs: false },
  );
  try {
    const report = await runFairnessDrill({
      base: server.base,
      metricsBase: `http://127.0.0.1:${METRICS_PORT}`,
      fixture,
      phaseMs: seconds * 1000,
    });
    console.log(await loadLine());
    printFairnessReport(report);
    passed = report.passed;
  } finally {
    await server.stop();
  }
} finally {
  await redis.stop();
  await pg.stop();
}
process.exit(passed ? 0 : 1);

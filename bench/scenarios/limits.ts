/**
 * Limits over HTTP: what the limiter adds to a request as a client meets it. Three `gwapi serve`
 * processes on one database answer the same discovery request of one key: limits lifted
 * (LIMITS_ENABLED=false), limits in process (no REDIS_URL), limits in Redis (REDIS_URL). The limits are
 * so high that nothing is refused (the load generator stops at any status but 200), so every request
 * pays the whole admission: a token, a slot, the RateLimit fields, the release when the response ends.
 *
 * Rounds alternate between the three (drift on a shared machine hits them alike); medians of the
 * rounds. One connection: the latency a request pays. CONNECTIONS connections: the throughput of one
 * replica. CPU per request of the server process and, when this script started it, of redis-server.
 * The limiter alone (no HTTP) costs 2–3 µs per admit and release: docs/decisions/, "Limits".
 *
 *   npm run bench -- limits [ROUNDS] [SECONDS] [CONNECTIONS]
 *   (DATABASE_URL and REDIS_URL, or a throwaway embedded PostgreSQL and redis-server)
 */

import { numberArguments } from '../../testkit/arguments.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { addKey, addWell } from '../../testkit/fixtures.js';
import { type Replica, spawnReplica } from '../../testkit/gwapi.js';
import { requirePrerequisites, throwawayPostgres, throwawayRedis } from '../../testkit/prerequisites.js';
import { processCpuMs } from '../../testkit/processes.js';
import { redisOrThrowaway } from '../../testkit/redis.js';
import { count, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import { type LoadResult, load } from '../lib/load.js';

requirePrerequisites([throwawayRedis, throwawayPostgres]);

const [ROUNDS, SECONDS, CONNECTIONS] = numberArguments(5, 3, 16);
const WELLS = 10;

/** Nothing is refused: a bucket that does not run dry in a run, and more slots than connections. */
const HIGH_LIMITS = {
  RATE_LIMIT_BURST: '1000000',
  RATE_LIMIT_PER_SECOND: '100000',
  CONCURRENCY_LIMIT: '1000',
};

const pg = await startDatabaseServer();
const redis = await redisOrThrowaway(process.env.REDIS_URL);
const redisPid = redis.pid;
const replicas: Replica[] = [];
try {
  console.log(`Limits over HTTP — ${await machineLine()}\n${pg.description}; Redis at ${redis.url}\n`);
  const { url, sql } = await pg.database('bench_limits_http');
  for (let well = 1; well <= WELLS; well++) {
    await addWell(sql, `Well ${well}`, [{ number: '1' }, { number: '2' }, { number: '3' }]);
  }
  const { key } = await addKey(sql, { allTubes: true });
  const common = { DATABASE_URL: url, LOG_LEVEL: 'info', ...HIGH_LIMITS };
  const targets: [string, Record<string, string>][] = [
    ['limits lifted', { ...common, LIMITS_ENABLED: 'false' }],
    ['limits in process', common],
    ['limits in Redis', { ...common, REDIS_URL: redis.url }],
  ];
  for (const [, env] of targets) replicas.push(await spawnReplica(env, { keepLogs: false }));
  console.log(
    `GET /v1/groundwater-monitoring-wells (${WELLS} wells × 3 tubes), one key, keep-alive connections; ` +
      `${SECONDS} s per target per round, median of ${ROUNDS} rounds\n`,
  );

  type Sample = LoadResult & { serverUs: number; redisUs: number };
  for (const connections of [1, CONNECTIONS]) {
    const samples = targets.map((): Sample[] => []);
    for (let round = -1; round < ROUNDS; round++) {
      for (const [index, replica] of replicas.entries()) {
        const serverBefore = processCpuMs(replica.child.pid!);
        const redisBefore = redisPid ? processCpuMs(redisPid) : Number.NaN;
        const result = await load(
          `${replica.base}/v1/groundwater-monitoring-wells`,
          { 'x-api-key': key },
          {
            connections,
            seconds: round < 0 ? 1 : SECONDS,
          },
        );
        const perRequest = (cpuMs: number) => (cpuMs * 1000) / result.requests;
        // Round -1 warms up (JIT, Redis scripts loaded, the discovery body cached).
        if (round >= 0) {
          samples[index]!.push({
            ...result,
            serverUs: perRequest(processCpuMs(replica.child.pid!) - serverBefore),
            redisUs: redisPid ? perRequest(processCpuMs(redisPid) - redisBefore) : Number.NaN,
          });
        }
      }
    }
    const medianOf = (index: number, field: keyof Sample) => median(samples[index]!.map((s) => s[field]));
    const micro = (value: number) => (Number.isNaN(value) ? '-' : `${value.toFixed(0)} µs`);
    console.log(`${connections} connection${connections === 1 ? '' : 's'}:`);
    printTable(
      ['target', 'requests/s', 'vs lifted', 'p50', 'p99', 'p50 added', 'CPU/request: server', 'redis-server'],
      targets.map(([name], index) => [
        name,
        count(medianOf(index, 'perSecond')),
        ratio(medianOf(index, 'perSecond') / medianOf(0, 'perSecond')),
        ms(medianOf(index, 'p50Ms')),
        ms(medianOf(index, 'p99Ms')),
        `${((medianOf(index, 'p50Ms') - medianOf(0, 'p50Ms')) * 1000).toFixed(0)} µs`,
        micro(medianOf(index, 'serverUs')),
        index === 2 ? micro(medianOf(index, 'redisUs')) : '-',
      ]),
    );
  }
} finally {
  for (const replica of replicas) await replica.stop();
  await redis.stop();
  await pg.stop();
}

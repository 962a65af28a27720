/**
 * `npm run faults [-- ABORTS ROUNDS]`: the fault tests' longer runs, too long for `npm test`
 * (test/faults/ has the assertions and the short versions). One `gwapi serve` on a PostgreSQL of its
 * own, limits in a Redis of its own:
 *
 * - ABORTS (default 10,000) series requests whose clients leave at four points; then the backends in
 *   a transaction, the stream gauges, both slots of every key, and the server's live memory after a
 *   warm-up.
 * - ROUNDS (default 10) of each PostgreSQL fault: an idle restart, and two paused streams cut by
 *   pg_terminate_backend, by SIGKILL of a backend and by SIGKILL of the postmaster; each round must cut
 *   the streams and give the key its two streams again.
 *
 * Prints a table; exits 1 if anything was left behind or a round failed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { seriesPath } from '../testkit/apiPaths.js';
import { numberArguments } from '../testkit/arguments.js';
import {
  abortMany,
  countStatuses,
  eventually,
  fetchOutcome,
  LIVE_MEMORY_GROWTH_BOUND_MB,
  pausedStreams,
  RECOVERED_WITHIN_MS,
  startFaultReplica,
  timedAborts,
  within,
} from '../testkit/faults.js';
import { addKey, addRegularSeries, addWell } from '../testkit/fixtures.js';
import { startOwnPostgres } from '../testkit/postgres.js';
import { embeddedPostgres, redisServer, requirePrerequisites } from '../testkit/prerequisites.js';
import { startRedis } from '../testkit/redis.js';

requirePrerequisites([redisServer, embeddedPostgres]);

const [ABORTS, ROUNDS] = numberArguments(10_000, 10);
const LANES = 8;

const teardowns: (() => unknown)[] = [];
const owner = { teardown: (done: () => unknown) => void teardowns.push(done) };
const rows: [string, string][] = [];
let failed = false;
const report = (what: string, result: string, ok = true) => {
  rows.push([what, ok ? result : `${result}  ← FAIL`]);
  failed ||= !ok;
  console.log(`${what}: ${result}${ok ? '' : '  ← FAIL'}`);
};

try {
  const redis = await startRedis();
  owner.teardown(redis.stop);
  const pg = await startOwnPostgres(owner);
  const [tube] = await addWell(pg.admin, 'Well', [{ number: '1' }]);
  await addRegularSeries(pg.admin, tube!.id, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z', '1 minute');
  const keys = await Promise.all(
    Array.from({ length: LANES }, async () => (await addKey(pg.admin, { tubeIds: [tube!.id] })).key),
  );
  const replica = await startFaultReplica(owner, pg.url, { REDIS_URL: redis.url });
  const paths = {
    short: seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'),
    long: seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z'),
  };
  const busy = async () => {
    const [row] = await pg.query(
      (sql) => sql<[{ n: number }]>`
        select count(*)::int as n from pg_stat_activity
        where application_name = 'gwapi serve' and state in ('idle in transaction', 'active')`,
    );
    return row.n;
  };
  const held = async () => (await replica.metric('gwapi_db_stream_connections{state="held"}')) ?? -1;
  const slotsFree = async () => {
    for (const key of keys) {
      const streams = await pausedStreams(replica.base, paths.long, key, 2);
      for (const stream of streams ?? []) stream.abort();
      if (!streams) return false;
    }
    return true;
  };

  // Aborts.
  await abortMany(replica.base, paths, keys, 500);
  await eventually(busy, 0);
  const baselineMb = await replica.liveMemoryMb();
  const { statuses, seconds, serverCpu: cpu } = await timedAborts(replica, paths, keys, ABORTS);
  report(
    `${ABORTS} aborts`,
    `${seconds.toFixed(1)} s, ${((cpu / ABORTS) * 1000).toFixed(1)} ms server CPU each; ${countStatuses(statuses, 200)} saw 200, ${countStatuses(statuses, 429)} saw 429`,
  );
  const busyAfter = await eventually(busy, 0);
  report('  backends left in a transaction', String(busyAfter), busyAfter === 0);
  const heldAfter = await eventually(held, 0);
  report('  stream connections held (metrics)', String(heldAfter), heldAfter === 0);
  const free = await slotsFree();
  report('  every key opens 2 streams', free ? 'yes' : 'no', free);
  const afterMb = await replica.liveMemoryMb();
  const growthMb = afterMb - baselineMb;
  report(
    '  server live memory after 500 warm-up aborts → after',
    `${baselineMb.toFixed(1)} MB → ${afterMb.toFixed(1)} MB (${growthMb >= 0 ? '+' : ''}${growthMb.toFixed(1)} MB; RSS ${replica.residentMb().toFixed(0)} MB)`,
    growthMb < LIVE_MEMORY_GROWTH_BOUND_MB,
  );

  // PostgreSQL faults, round after round.
  const serving = () =>
    pg.query(
      (sql) => sql<{ pid: number }[]>`
        select pid from pg_stat_activity
        where application_name = 'gwapi serve' and state in ('idle in transaction', 'active')`,
    );
  const faults: [string, () => Promise<void>, boolean][] = [
    ['idle restart (fast shutdown, start)', () => pg.restart(), false],
    [
      'mid-stream pg_terminate_backend',
      async () => {
        for (const { pid } of await serving())
          await pg.query((sql) => sql`select pg_terminate_backend(${pid})`);
      },
      true,
    ],
    [
      'mid-stream SIGKILL of a backend',
      async () => {
        process.kill((await serving())[0]!.pid, 'SIGKILL');
      },
      true,
    ],
    [
      'mid-stream SIGKILL of the postmaster, start',
      async () => {
        await pg.kill();
        await pg.start();
      },
      true,
    ],
  ];
  const key = keys[0]!;
  for (const [name, fault, midStream] of faults) {
    const recoveries: number[] = [];
    let bad = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const streams = midStream ? await pausedStreams(replica.base, paths.long, key, 2) : [];
      if (!streams) {
        bad++;
        continue;
      }
      await fault();
      const back = performance.now();
      for (const stream of streams) {
        stream.resume();
        const end = await within(stream.done, 15_000, { complete: true, body: '', bytes: Buffer.alloc(0) });
        if (end.complete || end.body.endsWith(']}')) bad++;
      }
      // Served again: a day's series (a cached discovery body may need no database for up to a
      // second), then (mid-stream faults) the key's two streams.
      let again = false;
      while (!again && performance.now() - back < RECOVERED_WITHIN_MS) {
        const day = await fetchOutcome(replica.base, paths.short, { 'x-api-key': key });
        again = day.status === 200 && day.complete;
        if (again && midStream) {
          const two = await pausedStreams(replica.base, paths.long, key, 2);
          for (const stream of two ?? []) stream.abort();
          again = two !== undefined;
        }
        if (!again) await sleep(50);
      }
      if (!again) bad++;
      recoveries.push(performance.now() - back);
      await eventually(held, 0);
    }
    recoveries.sort((a, b) => a - b);
    const median = recoveries[Math.floor(recoveries.length / 2)] ?? Number.NaN;
    report(
      `${name} × ${ROUNDS}`,
      `${bad} failed; served again after median ${median.toFixed(0)} ms, max ${(recoveries.at(-1) ?? Number.NaN).toFixed(0)} ms`,
      bad === 0,
    );
  }
} finally {
  for (const teardown of teardowns.reverse()) await teardown();
}

const width = Math.max(...rows.map(([what]) => what.length));
console.log(`\n${'fault'.padEnd(width)}  result`);
for (const [what, result] of rows) console.log(`${what.padEnd(width)}  ${result}`);
process.exit(failed ? 1 : 0);

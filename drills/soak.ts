/**
 * Soak: one real `gwapi serve` process (limits on and kept in Redis, metrics on METRICS_PORT, request
 * log at info: the production code path) under mixed load for a while, watched from outside: live and
 * resident memory, open connections and database sessions over time, and every error a client saw.
 *
 * Load (drills/lib/soakClients.ts), each client with a key of its own, polite ones under the contract's
 * limits: discovery clients, short-series clients (a day; some empty, some 404 and 400), year-long
 * series clients (read whole, plain and brotli, or left after the first chunk or mid-body), a greedy
 * client driven into 429 by its rate, and a crowding client refused for a third request in flight. Their
 * 429s are expected; any other unexpected status, a cut or wrong body, a socket error or a stall is an
 * error, and so is an error-level server log line.
 *
 * Verdict: the median live memory of the last window must be within 10 % of its median in the first
 * window after the warm-up (resident memory is shown, not judged: it moves with what the allocator
 * keeps, see testkit/inspector.ts); after the load, no stream, pooled stream connection, API
 * connection or concurrency slot may be left. Exit code 1 otherwise, or on any error.
 *
 *   npm run soak [-- MINUTES]          # or SOAK_MINUTES; default 10
 *   (DATABASE_URL and REDIS_URL, or a throwaway embedded PostgreSQL and redis-server)
 */
import { Redis } from 'ioredis';
import { freePort } from '../src/db/embedded.js';
import { exitWithUsage } from '../testkit/arguments.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { heldSlots } from '../testkit/drills/heldSlots.js';
import { type Replica, spawnReplica } from '../testkit/gwapi.js';
import { inspectFlag } from '../testkit/inspector.js';
import { requirePrerequisites, throwawayPostgres, throwawayRedis } from '../testkit/prerequisites.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { count, machineLine, median, printTable } from '../testkit/report.js';
import { type ServerSample, serverProbe } from './lib/serverProbe.js';
import {
  crowdClient,
  dayClient,
  discoveryClient,
  greedyClient,
  type SoakTarget,
  yearClient,
} from './lib/soakClients.js';
import { addSoakFixture, type SoakKey } from './lib/soakFixture.js';
import { createTally, since, type TallySnapshot, total } from './lib/soakTally.js';

requirePrerequisites([throwawayRedis, throwawayPostgres]);

const MINUTES = Number(process.argv[2] ?? process.env.SOAK_MINUTES ?? 10);
if (!(MINUTES > 0)) exitWithUsage('soak.ts [MINUTES] (or SOAK_MINUTES), a positive number');
const DURATION_MS = MINUTES * 60_000;
/** Memory is compared from the end of the warm-up on: JIT, caches, pools and heap have grown by then. */
const WARM_UP_MS = 0.2 * DURATION_MS;
/** The settled and final memory are medians over a window this long. */
const WINDOW_MS = 0.1 * DURATION_MS;
const REPORT_MS = Math.min(30_000, DURATION_MS / 10);
const SAMPLE_MS = REPORT_MS / 6;
const TOLERANCE = 0.1;
const CLIENTS = { discovery: 8, day: 8, year: 2 };
const SERVER_APPLICATION_NAME = 'gwapi serve';

const pg = await startDatabaseServer();
const redis = await redisOrThrowaway(process.env.REDIS_URL);
let replica: Replica | undefined;
let failures: string[] = [];
try {
  console.log(`Soak, ${MINUTES} min — ${await machineLine()}\n${pg.description}; Redis at ${redis.url}`);
  const { url, sql } = await pg.database('bench_soak');
  const fixture = await addSoakFixture(sql, CLIENTS);
  const [metricsPort, inspectorPort] = [await freePort(), await freePort()];
  replica = await spawnReplica(
    {
      DATABASE_URL: url,
      REDIS_URL: redis.url,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_SECONDS: '5',
      NODE_OPTIONS: inspectFlag(inspectorPort),
    },
    { keepLogs: false },
  );
  const serverErrors = countErrorLogLines(replica);
  const probe = serverProbe({
    pid: replica.child.pid!,
    apiPort: Number(new URL(replica.base).port),
    inspectorPort,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    sql,
    applicationName: SERVER_APPLICATION_NAME,
  });
  console.log(
    `gwapi serve pid ${replica.child.pid} at ${replica.base}; clients: ${CLIENTS.discovery} discovery, ` +
      `${CLIENTS.day} day, ${CLIENTS.year} year, 1 greedy (429 by rate), 1 crowding (429 by concurrency)\n` +
      `warm-up ${seconds(WARM_UP_MS)}, windows of ${seconds(WINDOW_MS)}, a row every ${seconds(REPORT_MS)}\n`,
  );

  const tally = createTally();
  const started = performance.now();
  const target: SoakTarget = {
    base: replica.base,
    year: fixture.yearTube,
    tally,
    deadline: started + DURATION_MS,
  };
  const clients = [
    ...fixture.discovery.map((k) => discoveryClient(target, k.key, k.expectedWells)),
    ...fixture.day.map((k) => dayClient(target, k.key, fixture.dayTubes)),
    ...fixture.yearKeys.map((k) => yearClient(target, k.key)),
    greedyClient(target, fixture.greedy.key, fixture.greedy.expectedWells),
    crowdClient(target, fixture.crowd.key),
  ];

  const samples: ServerSample[] = [];
  const report = reporter();
  let reported = tally.snapshot();
  let rowStart = 0;
  while (performance.now() < target.deadline) {
    await sleepUntil(Math.min(target.deadline, started + samples.length * SAMPLE_MS + SAMPLE_MS));
    samples.push(await probe.sample());
    const elapsed = performance.now() - started;
    if (elapsed - rowStart >= REPORT_MS - SAMPLE_MS / 2 || performance.now() >= target.deadline) {
      const now = tally.snapshot();
      report.row(
        elapsed,
        samples.filter((s) => s.at >= rowStart),
        since(now, reported),
        serverErrors(),
      );
      reported = now;
      rowStart = elapsed;
    }
  }
  await Promise.all(clients);

  // After the load: whatever is still held now is leaked.
  const left = await afterLoad(probe, redis.url, fixture.all);
  const totals = tally.snapshot();
  printTotals(totals);

  /** Medians of `reading` in the first window after the warm-up and in the last one, and the change. */
  const settledToFinal = (reading: (sample: ServerSample) => number) => {
    const window = (from: number, to = Number.POSITIVE_INFINITY) =>
      median(samples.filter((s) => s.at >= from && s.at < to).map(reading));
    const settled = window(WARM_UP_MS, WARM_UP_MS + WINDOW_MS);
    const final = window(DURATION_MS - WINDOW_MS);
    const change = final / settled - 1;
    const text = `${settled.toFixed(1)} → ${final.toFixed(1)} MB (${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %)`;
    return { change, text };
  };
  const live = settledToFinal((s) => s.liveMb);
  console.log(
    `Medians after warm-up (${seconds(WARM_UP_MS)}–${seconds(WARM_UP_MS + WINDOW_MS)}) → of the last ` +
      `${seconds(WINDOW_MS)}: live memory ${live.text}; RSS ${settledToFinal((s) => s.rssMb).text}`,
  );
  console.log(
    `After the load: ${left.sample.activeStreams} streams, ${left.sample.streamConnectionsHeld} pooled connections ` +
      `held by streams, ${left.sample.apiConnections} API connections, ${left.slots} concurrency slots in Redis, ` +
      `${left.sample.databaseSessions} database sessions (idle pool), RSS ${left.sample.rssMb.toFixed(1)} MB`,
  );

  failures = [
    ...(live.change > TOLERANCE
      ? [`live memory grew ${(live.change * 100).toFixed(1)} % (more than ${TOLERANCE * 100} %)`]
      : []),
    ...(total(totals.errors) > 0 ? [`${total(totals.errors)} unexpected results`] : []),
    ...(serverErrors() > 0 ? [`${serverErrors()} error log lines of the server`] : []),
    ...left.problems,
  ];
  for (const message of totals.firstErrors) console.log(`  ${message}`);
  console.log(failures.length === 0 ? 'PASS' : `FAIL: ${failures.join('; ')}`);
} catch (error) {
  failures.push(String(error));
  console.error(error);
} finally {
  await replica?.stop();
  await redis.stop();
  await pg.stop();
}
process.exit(failures.length === 0 ? 0 : 1);

function seconds(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
}

/** Counts the server's log lines at level error or fatal (pino: 50, 60) as they are written. */
function countErrorLogLines(server: Replica): () => number {
  let errors = 0;
  let partial = '';
  server.child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const level = /"level":(\d+)/.exec(line);
      if (level && Number(level[1]) >= 50) {
        errors++;
        // The message and error type only: a log line names no key, but stays short here.
        const parsed = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string } };
        console.log(
          `  server error log: ${parsed.msg} ${parsed.err?.type ?? ''} ${parsed.err?.message ?? ''}`,
        );
      }
    }
  });
  return () => errors;
}

/** The table printed as the run goes: one row per REPORT_MS. */
function reporter() {
  const columns: [string, number][] = [
    ['elapsed', 8],
    ['live MB', 7],
    ['RSS MB med/max', 15],
    ['API conns', 9],
    ['sockets', 7],
    ['DB sessions', 11],
    ['streams', 7],
    ['requests', 8],
    ['200', 6],
    ['400/404', 7],
    ['429', 6],
    ['errors', 6],
  ];
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(columns[i]![1]) : cell.padStart(columns[i]![1])))
      .join('  ');
  console.log(line(columns.map(([title]) => title)));
  console.log(line(columns.map(([, width]) => '-'.repeat(width))));
  return {
    row(elapsedMs: number, window: ServerSample[], happened: TallySnapshot, serverErrors: number) {
      const last = window.at(-1)!;
      const statusCount = (match: (status: number) => boolean) =>
        total(happened.responses, (key) => match(Number(key.slice(key.lastIndexOf(' ') + 1))));
      const elapsed = `${Math.floor(elapsedMs / 60_000)}:${String(Math.round((elapsedMs % 60_000) / 1000)).padStart(2, '0')}`;
      console.log(
        line([
          elapsed,
          median(window.map((s) => s.liveMb)).toFixed(1),
          `${median(window.map((s) => s.rssMb)).toFixed(0)}/${Math.max(...window.map((s) => s.rssMb)).toFixed(0)}`,
          String(last.apiConnections),
          String(last.socketFds),
          String(last.databaseSessions),
          `${last.activeStreams}`,
          count(total(happened.responses)),
          count(statusCount((s) => s === 200)),
          count(statusCount((s) => s === 400 || s === 404)),
          count(statusCount((s) => s === 429)),
          count(total(happened.errors) + serverErrors),
        ]),
      );
    },
  };
}

function printTotals(totals: TallySnapshot): void {
  console.log('\nResponses by kind and status (429s of the greedy and crowding clients are expected):');
  printTable(
    ['kind', 'status', 'responses'],
    [...totals.responses].sort().map(([key, value]) => {
      const at = key.lastIndexOf(' ');
      return [key.slice(0, at), key.slice(at + 1), count(value)];
    }),
  );
  if (totals.errors.size > 0) {
    console.log('Unexpected:');
    printTable(
      ['what', 'times'],
      [...totals.errors].map(([what, times]) => [what, count(times)]),
    );
  }
}

/**
 * Waits (up to 10 s) for the server to let go of everything the load held, and says what it kept.
 * Clients closed their keep-alive connections when they ended.
 */
async function afterLoad(probe: ReturnType<typeof serverProbe>, redisUrl: string, keys: SoakKey[]) {
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  try {
    const give = performance.now() + 10_000;
    for (;;) {
      const sample = await probe.sample();
      const slots = await heldSlots(
        redis,
        keys.map(({ keyId }) => keyId),
      );
      const problems = [
        ...(sample.activeStreams > 0 ? [`${sample.activeStreams} streams still active`] : []),
        ...(sample.streamConnectionsHeld + sample.streamConnectionsWaiting > 0
          ? [
              `${sample.streamConnectionsHeld + sample.streamConnectionsWaiting} stream connections not given back`,
            ]
          : []),
        ...(sample.apiConnections > 0 ? [`${sample.apiConnections} API connections still open`] : []),
        ...(slots > 0 ? [`${slots} concurrency slots still held in Redis`] : []),
      ];
      if (problems.length === 0 || performance.now() > give) return { sample, slots, problems };
      await sleepUntil(performance.now() + 500);
    }
  } finally {
    redis.disconnect();
  }
}

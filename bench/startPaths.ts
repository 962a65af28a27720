/**
 * Server memory on each way an operator starts `gwapi serve` from a checkout, on the compiled code:
 * `npx gwapi serve`, `npm start`, `node dist/cli.js serve` (the image's entry point), and the last with
 * the heap options in NODE_OPTIONS (as the image set them up to 1.1.0). Each run is a fresh server:
 * warmed up on one day, then the RSS growth of a year of 1-minute data (peak minus idle resident set,
 * the kernel's VmHWM, as bench/series.ts), then ABORTS requests whose clients leave at the four points
 * of the fault tests (test/helpers/faults.ts), after which its resident set and its peak are read.
 *
 *   node --import tsx bench/startPaths.ts [RUNS] [CHECKOUT]   (DATABASE_URL, or an embedded PostgreSQL)
 *
 * CHECKOUT: another checkout's servers (its dist/ built here first), to measure code before a change.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/db/embedded.js';
import { SERVICE_NODE_OPTIONS } from '../src/heap.js';
import { seriesPath } from '../testkit/apiPaths.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { abortMany, countStatuses } from '../testkit/faults.js';
import { addKey } from '../testkit/fixtures.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { alive, childPids, peakMb, resetPeakMb, residentMb, stopProcess } from '../testkit/processes.js';
import { machineLine, mb, median, printTable } from '../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../testkit/seriesFixture.js';
import { timedGet } from './lib/http.js';

requirePrerequisites([throwawayPostgres]);

const RUNS = Number(process.argv[2] ?? 3);
const CHECKOUT = resolve(process.argv[3] ?? fileURLToPath(new URL('..', import.meta.url)));
const ABORTS = 300;
/** Keys aborting side by side, one request of a key at a time (as the fault tests). */
const LANES = 8;
const READY_TIMEOUT_MS = 60_000;

interface StartPath {
  name: string;
  command: string;
  args: string[];
  nodeOptions?: string;
}

const PATHS: StartPath[] = [
  { name: 'npx gwapi serve', command: 'npx', args: ['gwapi', 'serve'] },
  { name: 'npm start', command: 'npm', args: ['start'] },
  { name: 'node dist/cli.js serve', command: process.execPath, args: ['dist/cli.js', 'serve'] },
  {
    name: 'node dist/cli.js serve, heap options in NODE_OPTIONS',
    command: process.execPath,
    args: ['dist/cli.js', 'serve'],
    nodeOptions: SERVICE_NODE_OPTIONS.join(' '),
  },
];

/**
 * The process of the tree under `root` that runs dist/cli.js: npm and npx start it through a shell, npx
 * by the link to it in its cache.
 */
function serverPid(root: number): number | undefined {
  const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  for (const pid of [root, ...childPids(root)]) {
    try {
      if (commandLine(pid).some((arg) => /(dist\/cli\.js|\.bin\/gwapi)$/.test(arg))) return pid;
      const below = pid === root ? undefined : serverPid(pid);
      if (below) return below;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Running, and not only a zombie its parent has yet to reap. */
const running = (pid: number) => {
  try {
    return alive(pid) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** SIGTERM to `pid`, then its end (it drains its streams first). */
async function stopServer(pid: number): Promise<void> {
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (running(pid)) {
    if (Date.now() > deadline) throw new Error(`server ${pid} still runs after SIGTERM`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function untilLive(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before listening`);
    try {
      if ((await fetch(`${base}/health/live`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not listening within ${READY_TIMEOUT_MS} ms`);
}

const pg = await startDatabaseServer();
try {
  console.log(`Start paths — ${await machineLine()}\n${pg.description}\nCheckout: ${CHECKOUT}\n`);
  execFileSync('npm', ['run', 'build'], { cwd: CHECKOUT, stdio: 'ignore' });
  const { url, sql } = await pg.database('bench_start_paths');
  const fixture = await addSeriesFixture(sql);
  const keys = [fixture.key];
  while (keys.length < LANES) keys.push((await addKey(sql, { tubeIds: [fixture.tubeId] })).key);
  const seriesOf = (days: number) => seriesPath(fixture.identifier, SERIES_START, dayAfterStart(days));
  const abortPaths = { short: seriesOf(1), long: seriesOf(366) };

  const rows: string[][] = [];
  for (const path of PATHS) {
    const samples: { idle: number; year: number; afterAborts: number; abortPeak: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: url,
        HOST: '127.0.0.1',
        PORT: String(port),
        RATE_LIMIT_BURST: '100000',
        RATE_LIMIT_PER_SECOND: '1000',
        ...(path.nodeOptions ? { NODE_OPTIONS: path.nodeOptions } : {}),
      };
      // Log lines go where a production server's would go if nobody read them.
      const child = spawn(path.command, path.args, { cwd: CHECKOUT, env, stdio: 'ignore' });
      let pid: number | undefined;
      try {
        await untilLive(base, child);
        pid = serverPid(child.pid!);
        if (!pid) throw new Error(`${path.name}: no process runs dist/cli.js`);
        const get = (days: number) => timedGet(`${base}${seriesOf(days)}`, { 'x-api-key': fixture.key });
        for (let warm = 0; warm < 3; warm++) await get(1);
        const idle = residentMb(pid);
        resetPeakMb(pid);
        const year = await get(366);
        if (year.status !== 200) throw new Error(`${path.name}: a year gave ${year.status}`);
        const yearPeak = peakMb(pid);
        resetPeakMb(pid);
        const statuses = await abortMany(base, abortPaths, keys, ABORTS);
        if (countStatuses(statuses) !== ABORTS) throw new Error(`${path.name}: aborts went missing`);
        // The server notices the last clients' leaving within moments; then its streams are gone.
        await new Promise((r) => setTimeout(r, 1000));
        samples.push({ idle, year: yearPeak - idle, afterAborts: residentMb(pid), abortPeak: peakMb(pid) });
      } finally {
        // The server itself: npm and npx end on SIGTERM and leave it running.
        if (pid) await stopServer(pid);
        await stopProcess(child);
      }
    }
    const middle = (field: keyof (typeof samples)[0]) => median(samples.map((s) => s[field]));
    rows.push([
      path.name,
      mb(middle('idle')),
      `${mb(middle('year'))} (${samples.map((s) => s.year.toFixed(1)).join(' / ')})`,
      mb(middle('afterAborts')),
      mb(middle('abortPeak')),
    ]);
  }
  printTable(
    ['start path', 'idle RSS', `RSS growth, a year (runs)`, `RSS after ${ABORTS} aborts`, 'peak during them'],
    rows,
  );
  console.log(`\nMedians of ${RUNS} runs, each on a fresh server.`);
} finally {
  await pg.stop();
}

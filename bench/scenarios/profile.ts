/**
 * CPU profiles of the hot paths, for flame graphs: the benchmark server (bench/lib/benchServer.ts, with
 * the service's Node options) profiles itself only while it serves the workload, so start-up is not in
 * the profile. Writes a `.cpuprofile` (open it in Chrome DevTools' Performance panel or in speedscope)
 * and prints the functions with the most self time.
 *
 *   npm run bench -- profile series [RUNS] [OUT_DIR]       # a year-long series RUNS times (default 5)
 *   npm run bench -- profile discovery [SECONDS] [OUT_DIR] # discovery with gzip under load (default 5 s)
 *   npm run bench -- profile page [RUNS] [OUT_DIR]         # OGC's page of 50,000 of that series RUNS times (default 20)
 *
 * OUT_DIR defaults to bench/results (ignored by git).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { exitWithUsage } from '../../testkit/arguments.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, machineLine, printTable } from '../../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import { addDiscoveryFixture } from '../lib/discoveryFixture.js';
import { timedGet } from '../lib/http.js';
import { load } from '../lib/load.js';
import { startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [workload = 'series', amount, outDir = 'bench/results'] = process.argv.slice(2);
if (workload !== 'series' && workload !== 'discovery' && workload !== 'page')
  exitWithUsage(
    'npm run bench -- profile series [RUNS] [OUT_DIR] | discovery [SECONDS] [OUT_DIR] | page [RUNS] [OUT_DIR]',
  );
const TOP = 25;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (name, file, line), in ms, largest first. */
function selfTimes(profile: CpuProfile): { total: number; rows: [string, number][] } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    const where = url ? ` ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    total += ms;
  });
  return { total, rows: [...byFunction].sort((a, b) => b[1] - a[1]) };
}

const pg = await startDatabaseServer();
try {
  console.log(`Profile of ${workload} — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database(`profile_${workload}`);
  /** Warms the server up and returns the workload to profile, which says what it did. */
  let run: (base: string) => Promise<() => Promise<string>>;
  if (workload === 'series') {
    const runs = Number(amount ?? 5);
    const fixture = await addSeriesFixture(sql);
    const path = `/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements`;
    const query = (days: number) => `?from=${SERIES_START}&to=${dayAfterStart(days)}`;
    run = async (base) => {
      await timedGet(`${base}${path}${query(1)}`, { 'x-api-key': fixture.key }); // warm-up
      return async () => {
        for (let i = 0; i < runs; i++)
          await timedGet(`${base}${path}${query(366)}`, { 'x-api-key': fixture.key });
        return `${runs} × a year-long series (527,040 measurements)`;
      };
    };
  } else if (workload === 'page') {
    const runs = Number(amount ?? 20);
    const fixture = await addSeriesFixture(sql);
    const page = `/v1/ogc/collections/measurements/items?tubeIdentifier=${fixture.identifier}&limit=50000`;
    run = async (base) => {
      await timedGet(`${base}${page}`, { 'x-api-key': fixture.key }); // warm-up
      return async () => {
        for (let i = 0; i < runs; i++) await timedGet(`${base}${page}`, { 'x-api-key': fixture.key });
        return `${runs} × a page of 50,000 measurements (OGC API - Features)`;
      };
    };
  } else {
    const seconds = Number(amount ?? 5);
    const key = await addDiscoveryFixture(sql);
    const headers = { 'x-api-key': key, 'accept-encoding': 'gzip' };
    run = async (base) => {
      const target = `${base}/v1/groundwater-monitoring-wells`;
      await load(target, headers, { connections: 16, seconds: 1 }); // warm-up, cache filled
      return async () => {
        const result = await load(target, headers, { connections: 16, seconds });
        return `discovery (1,000 wells × 3 tubes, gzip), ${count(result.requests)} requests in ${seconds} s`;
      };
    };
  }

  const server = await startServerProcess('api', url);
  try {
    const workloadRun = await run(server.base);
    await mkdir(outDir, { recursive: true });
    const file = resolve(
      join(outDir, `${workload}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`),
    );
    await server.startProfile();
    const what = await workloadRun();
    await server.stopProfile(file);
    const { total, rows } = selfTimes(JSON.parse(await readFile(file, 'utf8')) as CpuProfile);
    console.log(
      `${what}\nprofile: ${file}\nsampled ${total.toFixed(0)} ms; the ${TOP} functions with the most self time:\n`,
    );
    printTable(
      ['function', 'self', 'share'],
      rows
        .slice(0, TOP)
        .map(([name, ms]) => [name, `${ms.toFixed(0)} ms`, `${((ms / total) * 100).toFixed(1)} %`]),
    );
  } finally {
    await server.stop();
  }
} finally {
  await pg.stop();
}

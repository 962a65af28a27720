/**
 * Two streams at once: the year-long series (527,040 measurements) requested once, and twice at the
 * same time with the same key (the contract allows two requests in flight per client), in alternating
 * rounds; medians. Aggregate measurements per second, and where the CPU went: the server process, its
 * database backends and this client process, each in ms of CPU, and the cores they kept busy together.
 *
 *   npm run bench -- concurrent [ROUNDS]
 */

import { numberArguments } from '../../testkit/arguments.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import {
  addSeriesFixture,
  dayAfterStart,
  MINUTES_PER_DAY,
  SERIES_START,
} from '../../testkit/seriesFixture.js';
import { backendCpuMeter, ownCpuMs } from '../lib/cpu.js';
import { timedGet } from '../lib/http.js';
import { SERVER_APPLICATION_NAME, startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [ROUNDS] = numberArguments(5);
const YEAR_ROWS = 366 * MINUTES_PER_DAY;

const pg = await startDatabaseServer();
try {
  console.log(`Concurrent streams benchmark — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_concurrent');
  const fixture = await addSeriesFixture(sql);
  const server = await startServerProcess('api', url);
  const database = backendCpuMeter(sql, SERVER_APPLICATION_NAME);
  const yearUrl =
    `${server.base}/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements` +
    `?from=${SERIES_START}&to=${dayAfterStart(366)}`;
  const stream = async () => {
    const response = await timedGet(yearUrl, { 'x-api-key': fixture.key });
    if (response.status !== 200) throw new Error(`status ${response.status}`);
  };
  try {
    type Sample = { ms: number; serverMs: number; databaseMs: number; clientMs: number };
    const variants: [string, number][] = [
      ['one stream', 1],
      ['two streams at once', 2],
    ];
    const samples = new Map<string, Sample[]>(variants.map(([name]) => [name, []]));
    for (let round = -1; round < ROUNDS; round++) {
      for (const [name, streams] of variants) {
        const [serverBefore, clientBefore] = [server.cpuMs(), ownCpuMs()];
        await database.start();
        const started = performance.now();
        await Promise.all(Array.from({ length: streams }, stream));
        const sample = {
          ms: performance.now() - started,
          serverMs: server.cpuMs() - serverBefore,
          databaseMs: await database.stop(),
          clientMs: ownCpuMs() - clientBefore,
        };
        if (round >= 0) samples.get(name)!.push(sample); // round -1 warms up
      }
    }
    const medianOf = (name: string, field: keyof Sample) => median(samples.get(name)!.map((s) => s[field]));
    const rate = (name: string, streams: number) => (streams * YEAR_ROWS) / (medianOf(name, 'ms') / 1000);
    printTable(
      ['variant', 'wall', 'measurements/s (all)', 'server CPU', 'database CPU', 'client CPU', 'cores busy'],
      variants.map(([name, streams]) => {
        const cpu = medianOf(name, 'serverMs') + medianOf(name, 'databaseMs') + medianOf(name, 'clientMs');
        return [
          name,
          ms(medianOf(name, 'ms')),
          count(rate(name, streams)),
          ms(medianOf(name, 'serverMs')),
          ms(medianOf(name, 'databaseMs')),
          ms(medianOf(name, 'clientMs')),
          (cpu / medianOf(name, 'ms')).toFixed(2),
        ];
      }),
    );
    const gain = rate('two streams at once', 2) / rate('one stream', 1);
    console.log(
      `target: two streams ≥ 1.5 × one stream's measurements/s: ${ratio(gain)} — ${gain >= 1.5 ? 'met' : 'NOT met'}\n`,
    );
  } finally {
    await server.stop();
  }
} finally {
  await pg.stop();
}

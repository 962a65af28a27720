/**
 * Conditional requests benchmark: latency and server CPU of a 304 for a year of 1-minute data (527,040
 * measurements) against the 200 of the same series, and against discovery (1,000 wells × 3 tubes,
 * cached body) answered with 200 and with 304. One request at a time over a new connection each, as a
 * nightly script sends them, limits lifted; per round the mean of its requests, then the median of
 * the rounds. Server CPU is read from /proc (10 ms resolution), so the short requests run in batches.
 *
 *   npm run bench -- conditional [ROUNDS] [BATCH]     (DATABASE_URL, or an embedded PostgreSQL)
 */

import { numberArguments } from '../../testkit/arguments.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, machineLine, median, ms, printTable } from '../../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import { addDiscoveryFixture } from '../lib/discoveryFixture.js';
import { timedGet } from '../lib/http.js';
import { startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [ROUNDS, BATCH] = numberArguments(5, 200);

const pg = await startDatabaseServer();
try {
  console.log(`Conditional requests benchmark — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_conditional');
  const series = await addSeriesFixture(sql);
  const discoveryKey = await addDiscoveryFixture(sql);
  const server = await startServerProcess('api', url);
  try {
    const seriesUrl = `${server.base}/v1/groundwater-monitoring-tubes/${series.identifier}/measurements?from=${SERIES_START}&to=${dayAfterStart(366)}`;
    const wellsUrl = `${server.base}/v1/groundwater-monitoring-wells`;
    const seriesHeaders = { 'x-api-key': series.key };
    const wellsHeaders = { 'x-api-key': discoveryKey };
    const tagOf = async (target: string, headers: Record<string, string>) => {
      const response = await timedGet(target, headers);
      if (response.status !== 200) throw new Error(`${target}: ${response.status}`);
      return String(response.headers.etag);
    };
    const seriesTag = await tagOf(seriesUrl, seriesHeaders);
    const wellsTag = await tagOf(wellsUrl, wellsHeaders);

    const variants: [
      name: string,
      target: string,
      headers: Record<string, string>,
      status: number,
      batch: number,
    ][] = [
      ['series, 200 (366 days, 527,040 rows)', seriesUrl, seriesHeaders, 200, 1],
      [
        'series, 304 (If-None-Match)',
        seriesUrl,
        { ...seriesHeaders, 'if-none-match': seriesTag },
        304,
        BATCH,
      ],
      ['discovery, 200 (cached body, 3,000 tubes)', wellsUrl, wellsHeaders, 200, BATCH],
      [
        'discovery, 304 (If-None-Match)',
        wellsUrl,
        { ...wellsHeaders, 'if-none-match': wellsTag },
        304,
        BATCH,
      ],
    ];
    const samples = new Map(
      variants.map(([name]) => [name, [] as { ms: number; cpuMs: number; bytes: number }[]]),
    );
    // Round -1 warms up and is not counted.
    for (let round = -1; round < ROUNDS; round++) {
      for (const [name, target, headers, status, batch] of variants) {
        const cpuBefore = server.cpuMs();
        const started = performance.now();
        let bytes = 0;
        for (let i = 0; i < batch; i++) {
          const response = await timedGet(target, headers);
          if (response.status !== status) throw new Error(`${name}: ${response.status}`);
          bytes = response.bytes;
        }
        const perRequest = (total: number) => total / batch;
        if (round >= 0) {
          samples.get(name)!.push({
            ms: perRequest(performance.now() - started),
            cpuMs: perRequest(server.cpuMs() - cpuBefore),
            bytes,
          });
        }
      }
    }
    const full = samples.get(variants[0]![0])!;
    const fullMs = median(full.map((s) => s.ms));
    const fullCpu = median(full.map((s) => s.cpuMs));
    console.log(`${ROUNDS} rounds; the short requests ${count(BATCH)} per round\n`);
    printTable(
      ['', 'latency', 'server CPU', 'body bytes', 'series 200 latency ÷ this', 'series 200 CPU ÷ this'],
      variants.map(([name]) => {
        const runs = samples.get(name)!;
        const latency = median(runs.map((s) => s.ms));
        const cpu = median(runs.map((s) => s.cpuMs));
        return [
          name,
          ms(latency),
          ms(cpu),
          count(runs[0]!.bytes),
          count(fullMs / latency),
          count(fullCpu / cpu),
        ];
      }),
    );
  } finally {
    await server.stop();
  }
} finally {
  await pg.stop();
}

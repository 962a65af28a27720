/**
 * Discovery benchmark: requests per second of GET /v1/groundwater-monitoring-wells for 1,000 wells × 3
 * tubes and a key that sees all, limits lifted, against a bare Fastify route returning a constant,
 * both in server processes of their own, loaded by the same generator (bench/lib/load.ts) in rounds
 * that alternate between them; medians of the rounds. Also the first request (the cache is empty:
 * the query, grouping and serializing) and the body sizes with gzip and br.
 *
 * The bare server also sends constant bodies of discovery's sizes (plain, gzip, br): what moving those
 * bytes through loopback costs with nothing else, the ceiling for discovery on this machine. The
 * difference in server CPU per request is what the service itself adds (key, log, metrics, headers).
 *
 *   npm run bench -- discovery [ROUNDS] [SECONDS] [CONNECTIONS]
 */

import { numberArguments } from '../../testkit/arguments.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import { backendCpuMeter, ownCpuMs } from '../lib/cpu.js';
import { addDiscoveryFixture, TUBES_PER_WELL, WELLS } from '../lib/discoveryFixture.js';
import { timedGet } from '../lib/http.js';
import { type LoadResult, load } from '../lib/load.js';
import { SERVER_APPLICATION_NAME, startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [ROUNDS, SECONDS, CONNECTIONS] = numberArguments(5, 4, 16);

const pg = await startDatabaseServer();
try {
  console.log(`Discovery benchmark — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_discovery');
  const key = await addDiscoveryFixture(sql);
  const api = await startServerProcess('api', url);
  const bare = await startServerProcess('bare');
  try {
    const wellsUrl = `${api.base}/v1/groundwater-monitoring-wells`;
    const headers = { 'x-api-key': key };
    const first = await timedGet(wellsUrl, headers, true);
    const wells = JSON.parse(first.body!.toString());
    if (wells.length !== WELLS) throw new Error(`discovery listed ${wells.length} wells`);
    const bytes: Record<string, number> = { plain: first.bytes };
    for (const coding of ['gzip', 'br']) {
      // The first request of a coding waits for its compression; later ones are served from the cache.
      bytes[coding] = (await timedGet(wellsUrl, { ...headers, 'accept-encoding': coding })).bytes;
    }
    console.log(
      `${count(WELLS)} wells × ${TUBES_PER_WELL} tubes, body ${count(first.bytes)} B (gzip ${count(bytes.gzip!)} B, br ${count(bytes.br!)} B); ` +
        `first request (cache empty) ${ms(first.totalMs)}\n` +
        `${CONNECTIONS} keep-alive connections, ${SECONDS} s per target per round, median of ${ROUNDS} rounds\n`,
    );

    const codings = ['plain', 'gzip', 'br'] as const;
    const sameBytes = (coding: string) => `bare, ${coding}'s bytes`;
    const discovery = (coding: string) => (coding === 'plain' ? 'discovery' : `discovery, ${coding}`);
    const targets: [string, string, Record<string, string>][] = [
      ['bare Fastify, constant', `${bare.base}/`, {}],
      ...codings.map((coding): [string, string, Record<string, string>] => [
        sameBytes(coding),
        `${bare.base}/bytes/${bytes[coding]}`,
        {},
      ]),
      ...codings.map((coding): [string, string, Record<string, string>] => [
        discovery(coding),
        wellsUrl,
        coding === 'plain' ? headers : { ...headers, 'accept-encoding': coding },
      ]),
    ];
    type Sample = LoadResult & { serverUs: number; databaseUs: number; clientUs: number };
    const results = new Map<string, Sample[]>(targets.map(([name]) => [name, []]));
    const database = backendCpuMeter(sql, SERVER_APPLICATION_NAME);
    for (let round = -1; round < ROUNDS; round++) {
      for (const [name, target, sent] of targets) {
        const server = target.startsWith(api.base) ? api : bare;
        const [serverBefore, clientBefore] = [server.cpuMs(), ownCpuMs()];
        await database.start();
        const seconds = round < 0 ? 1 : SECONDS;
        const result = await load(target, sent, { connections: CONNECTIONS, seconds });
        const perRequest = (cpuMs: number) => (cpuMs * 1000) / result.requests;
        const sample = {
          ...result,
          serverUs: perRequest(server.cpuMs() - serverBefore),
          databaseUs: perRequest(await database.stop()),
          clientUs: perRequest(ownCpuMs() - clientBefore),
        };
        if (round >= 0) results.get(name)!.push(sample); // round -1 warms up
      }
    }
    const medianOf = (name: string, field: keyof Sample) =>
      median(results.get(name)!.map((result) => result[field]));
    const bareRate = medianOf('bare Fastify, constant', 'perSecond');
    printTable(
      [
        'target',
        'requests/s',
        'p50',
        'p99',
        'body',
        'vs bare',
        'CPU/request: server',
        'database',
        'load generator',
      ],
      targets.map(([name]) => [
        name,
        count(medianOf(name, 'perSecond')),
        ms(medianOf(name, 'p50Ms')),
        ms(medianOf(name, 'p99Ms')),
        `${count(medianOf(name, 'bodyBytes'))} B`,
        ratio(medianOf(name, 'perSecond') / bareRate),
        `${medianOf(name, 'serverUs').toFixed(0)} µs`,
        `${medianOf(name, 'databaseUs').toFixed(0)} µs`,
        `${medianOf(name, 'clientUs').toFixed(0)} µs`,
      ]),
    );
    const percent = (value: number) => `${(value * 100).toFixed(0)} %`;
    for (const coding of codings) {
      const share = medianOf(discovery(coding), 'perSecond') / bareRate;
      const ceiling = medianOf(sameBytes(coding), 'perSecond') / bareRate;
      const ownUs = medianOf(discovery(coding), 'serverUs') - medianOf(sameBytes(coding), 'serverUs');
      console.log(
        `${coding.padEnd(5)}: discovery ${percent(share)} of bare Fastify (target ≥ 25 %: ${share >= 0.25 ? 'met' : 'NOT met'}); ` +
          `the same bytes from a bare route ${percent(ceiling)}; the service adds ${ownUs.toFixed(0)} µs of server CPU per request`,
      );
    }
    console.log();
  } finally {
    await api.stop();
    await bare.stop();
  }
} finally {
  await pg.stop();
}

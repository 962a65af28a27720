/**
 * A/B of the service's cost per cached discovery request: this checkout against another one (a git
 * worktree of an earlier commit, say), each in a bench server of its own on the same database, loaded
 * in alternating rounds by the same generator. Single runs on a shared machine drift by ±15 %, more
 * than most savings worth having, so the figure is the median over rounds of the ratio of server CPU
 * per request (this / other) measured back to back within each round, over several pairs of processes.
 *
 *   node --import tsx bench/compare.ts OTHER_CHECKOUT [CODING] [PAIRS] [ROUNDS] [SECONDS] [CONNECTIONS]
 *   # e.g. git worktree add /tmp/base HEAD && ln -s "$PWD/node_modules" /tmp/base/ &&
 *   #      node --import tsx bench/compare.ts /tmp/base br
 *
 * CODING is plain, gzip or br (default br); defaults: 4 pairs of fresh server processes, 6 rounds of
 * 1.5 s each, 16 connections.
 */
import { resolve } from 'node:path';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { count, machineLine, median, printTable, ratio, spread } from '../testkit/report.js';
import { reportComparisons } from './lib/abReport.js';
import { addDiscoveryFixture } from './lib/discoveryFixture.js';
import { load } from './lib/load.js';
import { startServerProcess } from './lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [other, coding = 'br', pairs = '4', rounds = '6', seconds = '1.5', connections = '16'] =
  process.argv.slice(2);
interface Sample {
  perSecond: number;
  serverUs: number;
}
if (!other || !['plain', 'gzip', 'br'].includes(coding)) {
  console.error(
    'usage: bench/compare.ts OTHER_CHECKOUT [plain|gzip|br] [PAIRS] [ROUNDS] [SECONDS] [CONNECTIONS]',
  );
  process.exit(2);
}

const pg = await startDatabaseServer();
try {
  console.log(`Discovery A/B (${coding}) — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_compare');
  const key = await addDiscoveryFixture(sql);
  const headers: Record<string, string> = { 'x-api-key': key };
  if (coding !== 'plain') headers['accept-encoding'] = coding;
  const samples = { this: [] as Sample[], other: [] as Sample[] };
  const ratios: number[] = [];
  const pairRatios: number[] = [];
  for (let pair = 0; pair < Number(pairs); pair++) {
    // Fresh processes for each pair: two processes of the same code differ by up to ~10 % for their
    // whole life (JIT decisions, memory layout), a bias that rounds alone cannot average away.
    const servers = {
      this: await startServerProcess('api', url),
      other: await startServerProcess('api', url, { entry: resolve(other, 'bench/lib/benchServer.ts') }),
    };
    try {
      const inPair: number[] = [];
      for (let round = -1; round < Number(rounds); round++) {
        // Which goes first alternates, so that a drift within a round favours neither.
        const order = round % 2 === 0 ? (['this', 'other'] as const) : (['other', 'this'] as const);
        const inRound: Partial<Record<'this' | 'other', number>> = {};
        for (const name of order) {
          const server = servers[name];
          const before = server.cpuMs();
          const result = await load(`${server.base}/v1/groundwater-monitoring-wells`, headers, {
            connections: Number(connections),
            seconds: round < 0 ? 1 : Number(seconds),
          });
          const serverUs = ((server.cpuMs() - before) * 1000) / result.requests;
          inRound[name] = serverUs;
          if (round >= 0) samples[name].push({ perSecond: result.perSecond, serverUs });
        }
        if (round >= 0) inPair.push(inRound.this! / inRound.other!);
      }
      ratios.push(...inPair);
      pairRatios.push(median(inPair));
    } finally {
      await servers.this.stop();
      await servers.other.stop();
    }
  }
  const medianOf = (name: 'this' | 'other', field: keyof Sample) =>
    median(samples[name].map((sample) => sample[field]));
  printTable(
    ['checkout', 'requests/s', 'server CPU/request'],
    (['this', 'other'] as const).map((name) => [
      name === 'this' ? 'this' : other,
      count(medianOf(name, 'perSecond')),
      `${medianOf(name, 'serverUs').toFixed(1)} µs`,
    ]),
  );
  console.log(
    `server CPU per request, this / other: ${spread(ratios)} over ${ratios.length} rounds; ` +
      `per pair of processes ${pairRatios.map(ratio).join(', ')}`,
  );
  reportComparisons(
    [
      {
        benchmark: `discovery (${coding})`,
        metric: 'server CPU/request',
        unit: 'µs',
        this: medianOf('this', 'serverUs'),
        other: medianOf('other', 'serverUs'),
        ratios,
        pairs: pairRatios,
      },
    ],
    other,
    pg.description,
  );
} finally {
  await pg.stop();
}

/**
 * A/B of the year-long series (527,040 measurements) between this checkout and another (a git
 * worktree), as bench/compare.ts does for discovery: each checkout in a bench server of its own on the
 * same database, one year-long request each in alternating order per round, over several pairs of fresh
 * server processes. Per request: the time to the last byte, the server's CPU and its resident growth
 * (the kernel's peak, VmHWM, reset before the request, minus the resident set before it). The figures
 * are the medians over rounds of the ratios this / other, measured back to back within each round.
 *
 *   node --import tsx bench/compareSeries.ts OTHER_CHECKOUT [CODING] [PAIRS] [ROUNDS]
 *
 * CODING is plain, gzip or br (default br); defaults: 3 pairs of fresh server processes, 5 rounds.
 */
import { resolve } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { machineLine, mb, median, ms, printTable, ratio, spread } from '../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../testkit/seriesFixture.js';
import { reportComparisons } from './lib/abReport.js';
import { timedGet } from './lib/http.js';
import { type ServerProcess, startServerProcess } from './lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [other, coding = 'br', pairs = '3', rounds = '5'] = process.argv.slice(2);
if (!other || !['plain', 'gzip', 'br'].includes(coding)) {
  console.error('usage: bench/compareSeries.ts OTHER_CHECKOUT [plain|gzip|br] [PAIRS] [ROUNDS]');
  process.exit(2);
}
const DECODE = { plain: (body: Buffer) => body, gzip: gunzipSync, br: brotliDecompressSync };
type Name = 'this' | 'other';
/** Resident growths below this are noise (a warmed-up process grows by about a megabyte a request). */
const SMALL_GROWTH_MB = 5;
interface Sample {
  totalMs: number;
  cpuMs: number;
  growthMb: number;
  bytes: number;
}

const pg = await startDatabaseServer();
try {
  console.log(`Series A/B (${coding}) — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_compare_series');
  const fixture = await addSeriesFixture(sql);
  const path = `/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements?from=${SERIES_START}&to=${dayAfterStart(366)}`;
  const headers: Record<string, string> = { 'x-api-key': fixture.key };
  if (coding !== 'plain') headers['accept-encoding'] = coding;

  const samples: Record<Name, Sample[]> = { this: [], other: [] };
  const ratios = { cpuMs: [] as number[], totalMs: [] as number[], growthMb: [] as number[] };
  const pairCpu: number[] = [];
  let expected: Buffer | undefined;

  /** Both checkouts must send the same document: decoded, byte for byte. */
  async function check(server: ServerProcess): Promise<void> {
    const response = await timedGet(`${server.base}${path}`, headers, true);
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    if ((response.headers['content-encoding'] ?? 'plain') !== coding) throw new Error(`${coding} not sent`);
    const body = DECODE[coding as keyof typeof DECODE](response.body!);
    expected ??= body;
    if (!body.equals(expected)) throw new Error('the two checkouts sent different documents');
  }

  async function sample(server: ServerProcess): Promise<Sample> {
    const idle = server.residentMb();
    server.resetPeak();
    const cpuBefore = server.cpuMs();
    const response = await timedGet(`${server.base}${path}`, headers);
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    return {
      totalMs: response.totalMs,
      cpuMs: server.cpuMs() - cpuBefore,
      growthMb: server.peakMb() - idle,
      bytes: response.bytes,
    };
  }

  for (let pair = 0; pair < Number(pairs); pair++) {
    const servers: Record<Name, ServerProcess> = {
      this: await startServerProcess('api', url),
      other: await startServerProcess('api', url, { entry: resolve(other, 'bench/lib/benchServer.ts') }),
    };
    try {
      await check(servers.this);
      await check(servers.other);
      const inPair: number[] = [];
      // Round -1 warms both up (the JIT, the young generation's working size).
      for (let round = -1; round < Number(rounds); round++) {
        const order: Name[] = round % 2 === 0 ? ['this', 'other'] : ['other', 'this'];
        const inRound: Partial<Record<Name, Sample>> = {};
        for (const name of order) inRound[name] = await sample(servers[name]);
        if (round < 0) continue;
        const a = inRound.this!;
        const b = inRound.other!;
        samples.this.push(a);
        samples.other.push(b);
        for (const field of ['cpuMs', 'totalMs', 'growthMb'] as const)
          ratios[field].push(a[field] / b[field]);
        inPair.push(a.cpuMs / b.cpuMs);
      }
      pairCpu.push(median(inPair));
    } finally {
      await servers.this.stop();
      await servers.other.stop();
    }
  }

  const medianOf = (name: Name, field: keyof Sample) => median(samples[name].map((s) => s[field]));
  printTable(
    ['checkout', 'total', 'server CPU', 'RSS growth', 'body'],
    (['this', 'other'] as const).map((name) => [
      name === 'this' ? 'this' : other,
      ms(medianOf(name, 'totalMs')),
      ms(medianOf(name, 'cpuMs')),
      mb(medianOf(name, 'growthMb')),
      mb(medianOf(name, 'bytes') / 1e6),
    ]),
  );
  const n = ratios.cpuMs.length;
  console.log(`this / other over ${n} rounds:`);
  console.log(
    `  server CPU  ${spread(ratios.cpuMs)}; per pair of processes ${pairCpu.map(ratio).join(', ')}`,
  );
  console.log(`  total time  ${spread(ratios.totalMs)}`);
  console.log(`  RSS growth  ${spread(ratios.growthMb)}`);
  const row = (metric: string, field: keyof typeof ratios, unit: 'ms' | 'MB') => ({
    benchmark: `series (${coding})`,
    metric,
    unit,
    this: medianOf('this', field),
    other: medianOf('other', field),
    ratios: ratios[field],
  });
  reportComparisons(
    [
      { ...row('server CPU', 'cpuMs', 'ms'), pairs: pairCpu },
      row('time to last byte', 'totalMs', 'ms'),
      {
        ...row('RSS growth', 'growthMb', 'MB'),
        // A warmed-up process grows by about a megabyte either way; a ratio of such figures means nothing.
        unjudged:
          Math.max(medianOf('this', 'growthMb'), medianOf('other', 'growthMb')) < SMALL_GROWTH_MB
            ? `both under ${SMALL_GROWTH_MB} MB`
            : undefined,
      },
    ],
    other,
    pg.description,
  );
} finally {
  await pg.stop();
}

/**
 * Memory: how much a server's resident set grows (the kernel's peak, VmHWM, minus idle) while it
 * streams a year, each run on a fresh server warmed up on one day: the series in JSON for 30, 183 and
 * 366 days (the growth must not follow the length), and a year of the series and of the network in each
 * format. Bound (issue 5, issue 23): under 40 MB, flat within 20 % over the three lengths.
 *
 * On each engine of BENCH_ENGINE in turn (lib/engines.ts), the year compressed on TimescaleDB as its
 * policy leaves it: the figure is a size against its bound, not a time, so the engines need not share
 * rounds.
 *
 *   npm run bench -- memory [RUNS] [WELLS]     (defaults 3 runs per figure, 50 wells = 200 tubes)
 *   (DATABASE_URL, or an embedded PostgreSQL; BENCH_ENGINE)
 */
import { numberArguments } from '../../testkit/arguments.js';
import { loadLine, machineLine, mb, median, printTable } from '../../testkit/report.js';
import { benchEngines, ENGINE_NAMES, requireEnginePrerequisites } from '../lib/engines.js';
import { FORMATS, networkUrl, seriesUrl, startNetworkDatabase } from '../lib/networkFixture.js';
import { freshServerGrowthMb } from '../lib/serverProcess.js';

requireEnginePrerequisites();

const [RUNS, WELLS] = numberArguments(3, 50);
const BOUND_MB = 40;
const LENGTHS = [30, 183, 366];

console.log(`Memory — ${await machineLine()}`);
for (const engine of benchEngines()) {
  const db = await startNetworkDatabase('bench_memory', WELLS, engine);
  try {
    const { series, network } = db;
    console.log(`\n${ENGINE_NAMES[engine]}: ${db.description}; ${await loadLine()}`);
    console.log(
      `${network.tubes.length} tubes in the network; ${RUNS} runs per figure, each a fresh server\n`,
    );
    /** The median growth of RUNS fresh servers, with each run's. */
    const growth = async (url: (base: string, warmUp: boolean) => string, key: string) => {
      const runs: number[] = [];
      for (let run = 0; run < RUNS; run++)
        runs.push(await freshServerGrowthMb(db.url, url, { 'x-api-key': key }));
      return { median: median(runs), runs };
    };
    const shown = ({ median, runs }: { median: number; runs: number[] }) =>
      `${mb(median)} (${runs.map(mb).join(', ')})`;

    const byLength = [];
    for (const days of LENGTHS) {
      byLength.push(
        await growth(
          (base, warmUp) => seriesUrl(base, series.identifier, 'json', warmUp ? 1 : days),
          series.key,
        ),
      );
    }
    const highest = Math.max(...byLength.map((one) => one.median));
    const spread = (highest - Math.min(...byLength.map((one) => one.median))) / highest;
    printTable(
      ['series, JSON', ...LENGTHS.map((days) => `${days} days`), 'spread', 'met'],
      [
        [
          'RSS growth, median',
          ...byLength.map((one) => mb(one.median)),
          `${(spread * 100).toFixed(0)} %`,
          highest < BOUND_MB && spread <= 0.2 ? 'yes' : 'NO',
        ],
      ],
    );

    const rows: string[][] = [];
    for (const format of FORMATS) {
      const ofSeries = await growth(
        (base, warmUp) => seriesUrl(base, series.identifier, format, warmUp ? 1 : 366),
        series.key,
      );
      const ofNetwork = await growth(
        (base, warmUp) => networkUrl(base, format, warmUp ? 1 : 366),
        network.key,
      );
      const met = ofSeries.median < BOUND_MB && ofNetwork.median < BOUND_MB;
      rows.push([format, shown(ofSeries), shown(ofNetwork), met ? 'yes' : 'NO']);
    }
    printTable(['a year', 'series: median (runs)', 'network: median (runs)', `< ${BOUND_MB} MB`], rows);
    console.log(`${await loadLine()} at the end`);
  } finally {
    await db.stop();
  }
}

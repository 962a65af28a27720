/**
 * Store size benchmark: the year-long series of one tube from a store that holds only it, and from a
 * store that holds 10× more measurements of other tubes (lib/seriesFixture.ts). Two databases, a
 * server for each, alternating rounds; medians. Prints the plan of the series query on the large store.
 *
 *   node --import tsx bench/storeSize.ts [ROUNDS] [OTHER_TUBES]
 */
import { seriesSelect } from '../src/engine/read/selects.js';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { count, machineLine, median, ms, printTable, ratio } from '../testkit/report.js';
import { addSeriesFixture, dayAfterStart, MINUTES_PER_DAY, SERIES_START } from '../testkit/seriesFixture.js';
import { timedGet } from './lib/http.js';
import { type ServerProcess, startServerProcess } from './lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const ROUNDS = Number(process.argv[2] ?? 5);
const OTHER_TUBES = Number(process.argv[3] ?? 10);
const YEAR_ROWS = 366 * MINUTES_PER_DAY;
const TO = dayAfterStart(366);

const pg = await startDatabaseServer();
try {
  console.log(`Store size benchmark — ${await machineLine()}\n${pg.description}\n`);
  const small = await pg.database('bench_store_small');
  const large = await pg.database('bench_store_large');
  const stores = [
    { name: 'one tube alone', ...small, fixture: await addSeriesFixture(small.sql) },
    {
      name: `among ${OTHER_TUBES} other tubes`,
      ...large,
      fixture: await addSeriesFixture(large.sql, { otherTubes: OTHER_TUBES }),
    },
  ];
  const servers: ServerProcess[] = [];
  try {
    for (const store of stores) servers.push(await startServerProcess('api', store.url));
    const samples = stores.map(() => ({ floor: [] as number[], ours: [] as number[] }));
    for (let round = -1; round < ROUNDS; round++) {
      for (const [i, store] of stores.entries()) {
        const server = servers[i]!;
        const { tubeId, identifier, key } = store.fixture;
        const floor = await server.floor({ method: 'copyBinary', tubeId, from: SERIES_START, to: TO });
        if (floor.rows !== YEAR_ROWS) throw new Error(`${store.name}: ${floor.rows} rows`);
        const response = await timedGet(
          `${server.base}/v1/groundwater-monitoring-tubes/${identifier}/measurements?from=${SERIES_START}&to=${TO}`,
          { 'x-api-key': key },
        );
        if (response.status !== 200) throw new Error(`${store.name}: status ${response.status}`);
        if (round >= 0) {
          samples[i]!.floor.push(floor.ms);
          samples[i]!.ours.push(response.totalMs);
        }
      }
    }
    const rows = await Promise.all(
      stores.map(async (store) => {
        const [{ n }] = (await store.sql`select count(*)::int as n from measurements`) as [{ n: number }];
        return n;
      }),
    );
    const baseline = median(samples[0]!.ours);
    printTable(
      ['store', 'rows in measurements', 'floor (binary COPY, bare)', 'ours over HTTP', 'vs one tube alone'],
      stores.map((store, i) => [
        store.name,
        count(rows[i]!),
        ms(median(samples[i]!.floor)),
        ms(median(samples[i]!.ours)),
        ratio(median(samples[i]!.ours) / baseline),
      ]),
    );
    const change = median(samples[1]!.ours) / baseline - 1;
    console.log(
      `target: the same time within 20 %: ${(change * 100).toFixed(0)} % — ${Math.abs(change) <= 0.2 ? 'met' : 'NOT met'}\n`,
    );
    const plan = await large.sql`
      explain (analyze, buffers, costs off)
      ${large.sql.unsafe(seriesSelect(stores[1]!.fixture.tubeId, SERIES_START, TO))}`;
    console.log(
      `Plan of the series query on the large store:\n${plan.map((row) => `  ${row['QUERY PLAN']}`).join('\n')}\n`,
    );
  } finally {
    for (const server of servers) await server.stop();
  }
} finally {
  await pg.stop();
}

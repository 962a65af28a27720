/**
 * GeoJSON discovery against JSON discovery: 3,000 wells (2 tubes each, every well with a location and
 * every tube with elevations), a key that sees all, limits lifted, over real HTTP. Per round, the first
 * request of each after the registry changed (the cache empty: the query, grouping and serializing) and
 * REQUESTS sequential requests of each (from the cache), alternating; medians over the rounds.
 *
 *   npm run bench -- geojson [ROUNDS] [REQUESTS]        (5, 200)
 */
import { numberArguments } from '../../testkit/arguments.js';
import { startDatabaseServer } from '../../testkit/databaseServer.js';
import { addKey } from '../../testkit/fixtures.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, machineLine, median, ms, printTable, ratio } from '../../testkit/report.js';
import { timedGet } from '../lib/http.js';
import { startServerProcess } from '../lib/serverProcess.js';

requirePrerequisites([throwawayPostgres]);

const [ROUNDS, REQUESTS] = numberArguments(5, 200);
const WELLS = 3000;

const pg = await startDatabaseServer();
try {
  console.log(`GeoJSON discovery — ${await machineLine()}\n${pg.description}\n`);
  const { url, sql } = await pg.database('bench_geojson');
  await sql`
    with w as (
      insert into wells (name, longitude, latitude)
      select 'Well ' || i, 3.3 + (i % 100) * 0.037, 50.7 + (i / 100) * 0.09 from generate_series(1, ${WELLS}) i
      returning id
    )
    insert into tubes (identifier, well_id, number, ground_level, tube_top, screen_top, screen_bottom)
    select gen_random_uuid(), w.id, n::text, 1.25, 1.75, -4.5 * n, -6.5 * n from w, generate_series(1, 2) n`;
  const { key } = await addKey(sql, { allTubes: true });
  const api = await startServerProcess('api', url);
  try {
    const base = `${api.base}/v1/groundwater-monitoring-wells`;
    const kinds = [
      { label: 'JSON', url: base },
      { label: 'GeoJSON', url: `${base}?format=geojson` },
    ];
    const headers = { 'x-api-key': key };
    const first = new Map<string, number[]>();
    const cached = new Map<string, number[]>();
    const bytes = new Map<string, number>();
    const push = (map: Map<string, number[]>, label: string, value: number) =>
      map.set(label, [...(map.get(label) ?? []), value]);
    for (let round = -1; round < ROUNDS; round++) {
      // A registry change empties the cache of both.
      await sql`update wells set name = name || '' where id = (select min(id) from wells)`;
      await sql`update registry_version set version = version + 1`;
      const order = round % 2 === 0 ? kinds : [...kinds].reverse();
      for (const kind of order) {
        const timed = await timedGet(kind.url, headers);
        if (timed.status !== 200) throw new Error(`${kind.label}: ${timed.status}`);
        bytes.set(kind.label, timed.bytes);
        if (round >= 0) push(first, kind.label, timed.totalMs);
      }
      for (let i = 0; i < REQUESTS; i++) {
        for (const kind of i % 2 === 0 ? order : [...order].reverse()) {
          const timed = await timedGet(kind.url, headers);
          if (round >= 0) push(cached, kind.label, timed.totalMs);
        }
      }
    }
    console.log(
      `${count(WELLS)} wells × 2 tubes; JSON ${count(bytes.get('JSON')!)} B, GeoJSON ${count(bytes.get('GeoJSON')!)} B; ` +
        `${ROUNDS} rounds of ${REQUESTS} cached requests each, one request per connection\n`,
    );
    const m = (map: Map<string, number[]>, label: string) => median(map.get(label)!);
    printTable(
      ['discovery', 'first (cache empty)', 'cached'],
      kinds.map(({ label }) => [label, ms(m(first, label)), ms(m(cached, label))]),
    );
    printTable(
      ['ratio of medians', 'first', 'cached'],
      [
        [
          'GeoJSON / JSON (bound ≤ 1.5×)',
          ratio(m(first, 'GeoJSON') / m(first, 'JSON')),
          ratio(m(cached, 'GeoJSON') / m(cached, 'JSON')),
        ],
      ],
    );
  } finally {
    await api.stop();
  }
} finally {
  await pg.stop();
}

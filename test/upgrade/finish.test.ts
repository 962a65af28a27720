/**
 * `gwapi migrate --finish` on an upgraded, filled database (on TimescaleDB with its history compressed)
 * while the API serves series and an import commits: no request fails, every read before, during and
 * after gives the same bytes and the same validator, the next sync delta is empty, the rows move and
 * their bytes fall; a second run does nothing.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { type ChunkFinished, finishMigrations } from '../../src/db/finish.js';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { addKey, addNetwork, type TubeFixture } from '../../testkit/fixtures.js';
import { startApi } from '../helpers/api.js';
import { ENGINES, upgradedDatabase } from '../helpers/database.js';
import { get } from '../helpers/http.js';
import { NETWORK } from '../helpers/network.js';
import { bytesPerRow, stored } from '../helpers/valueStorage.js';

const DAY = 86_400_000;
const TUBES = 30;
const HISTORY_DAYS = 400;

interface Answer {
  status: number;
  etag: string | undefined;
  bytes: string;
}

for (const engine of ENGINES) {
  t.test(`${engine.name}: finished while it serves and imports, no byte a client reads moves`, async (t) => {
    const server = engine.server(t);
    if (server === null) return;
    const yesterday = Math.floor(Date.now() / DAY) * DAY - DAY;
    const from = yesterday - HISTORY_DAYS * DAY;
    let tubes: TubeFixture[] = [];
    const db = await upgradedDatabase(
      t,
      async (sql) => {
        tubes = await addNetwork(sql, TUBES, {
          from: new Date(from).toISOString(),
          to: new Date(yesterday).toISOString(),
          step: '1 hour',
        });
        if (await usesTimescaleDb(sql)) {
          await sql`select compress_chunk(c) from show_chunks('measurements', older_than => interval '180 days') c`;
        }
      },
      { server },
    );
    const { sql } = db;
    const timescale = await usesTimescaleDb(sql);
    const api = await startApi(t, { db, env: { LIMITS_ENABLED: 'false' } });
    const { key } = await addKey(sql, { allTubes: true });

    const month = (end: number) =>
      `from=${new Date(end - 30 * DAY).toISOString()}&to=${new Date(end).toISOString()}`;
    const ranges = [month(from + 60 * DAY), month(yesterday)];
    const reads: [string, string, Record<string, string>][] = [];
    for (const tube of [tubes[0]!, tubes[13]!, tubes.at(-1)!]) {
      for (const range of ranges) {
        const path = `/v1/groundwater-monitoring-tubes/${tube.identifier}/measurements?${range}&include=status`;
        reads.push([`${tube.number} ${range} JSON`, path, {}]);
        reads.push([`${tube.number} ${range} CSV`, `${path}&format=csv`, {}]);
        reads.push([
          `${tube.number} ${range} Arrow`,
          path,
          { accept: 'application/vnd.apache.arrow.stream' },
        ]);
        reads.push([`${tube.number} ${range} P1D`, path.replace('&include=status', '&aggregate=P1D'), {}]);
      }
    }
    // Its body holds a sync token, which any import moves: its series are compared.
    const network = `${NETWORK}?${ranges[1]}`;
    reads.push(['network', network, {}]);
    const read = async ([, path, headers]: (typeof reads)[number]): Promise<Answer> => {
      const response = await get(api.base, path, { 'x-api-key': key, ...headers });
      return {
        status: response.status,
        etag: path === network ? undefined : (response.headers.etag as string | undefined),
        bytes:
          path === network && response.status === 200
            ? JSON.stringify((JSON.parse(response.body) as { series: unknown }).series)
            : response.bytes!.toString('base64'),
      };
    };
    const before = await Promise.all(reads.map(read));
    t.same(
      before.filter((answer) => answer.status !== 200),
      [],
    );
    const syncToken = String((await get(api.base, network, { 'x-api-key': key })).headers['sync-token']);
    const { fitting } = await stored(sql);
    const bytesBefore = await bytesPerRow(sql, timescale);

    // Reads in a loop all along, each compared with its answer before.
    let running = true;
    const differing: string[] = [];
    let answered = 0;
    const reading = (async () => {
      for (let i = 0; running; i++) {
        const which = i % reads.length;
        const answer = await read(reads[which]!);
        answered++;
        if (JSON.stringify(answer) !== JSON.stringify(before[which]))
          differing.push(`${reads[which]![0]}: ${answer.status}`);
      }
    })();
    // An import of today's levels of a tube, committed while the finish moves the history's rows.
    const today = tubes[7]!;
    let imported: Promise<unknown> | undefined;
    const chunks: ChunkFinished[] = [];
    const started = performance.now();
    const result = await finishMigrations(sql, {
      onChunk: (chunk) => {
        chunks.push(chunk);
        imported ??= importMeasurements(
          sql,
          Readable.from([
            `tubeIdentifier,observedAt,value\n${[1, 2, 3].map((h) => `${today.identifier},${new Date(yesterday + DAY + h * 3_600_000).toISOString()},${h / 4}`).join('\n')}\n`,
          ]),
          { name: 'today.csv' },
        );
      },
    });
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await reading;
    t.same(await imported, { rows: 3, inserted: 3, updated: 0, unchanged: 0 }, 'the import committed');
    t.ok(
      chunks.length > (timescale ? 1 : 0) && answered > reads.length,
      `${answered} reads during ${chunks.length} chunks`,
    );
    t.same(differing, [], 'every read during the finish: 200, the same validator and bytes');

    t.equal(result.moved, fitting, `${result.moved} rows moved into thousandths`);
    t.same(
      await stored(sql),
      { doubles: 0, thousandths: fitting + 3, fitting: 0 },
      'the import stored thousandths',
    );
    const after = await Promise.all(reads.map(read));
    t.same(after, before, 'every read after: the same validator and bytes');
    const delta = await get(api.base, `${network}&changedSince=${syncToken}`, { 'x-api-key': key });
    t.equal(delta.status, 200);
    t.same(
      (JSON.parse(delta.body) as { series: { measurements: unknown[] }[] }).series.flatMap(
        (s) => s.measurements,
      ),
      [],
      'the next sync delta is empty',
    );
    const bytesAfter = await bytesPerRow(sql, timescale);
    t.comment(
      `${engine.name}: ${fitting} rows in ${seconds.toFixed(2)} s (${((seconds * 1e6) / fitting).toFixed(1)} µs a row) ` +
        `while ${answered} reads ran; ${bytesBefore.toFixed(2)} → ${bytesAfter.toFixed(2)} bytes a row` +
        (timescale ? ' of the compressed chunks' : ''),
    );
    if (timescale) t.ok(bytesAfter < bytesBefore / 2, 'the bytes a row of the compressed history fall');

    const again = await finishMigrations(sql);
    t.same(
      { moved: again.moved, madeNullable: again.madeNullable },
      { moved: 0, madeNullable: false },
      'again: nothing',
    );
    t.same(await Promise.all(reads.map(read)), before);
  });
}

/**
 * A/B of the import's staging path (its upsert) between this checkout and another (a git worktree), as
 * bench/compareImport.ts does for the direct path, but in process: each checkout's own migrations and
 * `importMeasurements`, each in a fresh database of the same durable server, alternating which goes
 * first. A year of 1-minute data for one tube (527,040 rows) is imported and vacuumed, then timed:
 *
 * - corrected: the same year with every value changed (527,040 rows updated by the upsert);
 * - readout: the year's last 30 days again and 30 new ones (43,200 updated, 43,200 inserted).
 *
 *   node --import tsx bench/compareUpsert.ts OTHER_CHECKOUT [ROUNDS]      (default 4 rounds)
 */
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { startDatabaseServer } from '../testkit/databaseServer.js';
import { requirePrerequisites, throwawayPostgres } from '../testkit/prerequisites.js';
import { machineLine, median, spread } from '../testkit/report.js';
import { THIS_CHECKOUT } from './lib/abReport.js';
import { DURABLE_SETTINGS, IMPORT_REGISTRY, IMPORT_TUBE, YEAR_ROWS } from './lib/importFixture.js';

requirePrerequisites([throwawayPostgres]);

const [other, rounds = '4'] = process.argv.slice(2);
if (!other || !(Number(rounds) > 0)) {
  console.error('usage: bench/compareUpsert.ts OTHER_CHECKOUT [ROUNDS]');
  process.exit(2);
}
type Name = 'this' | 'other';
const CHECKOUTS: Record<Name, string> = { this: THIS_CHECKOUT, other: resolve(other) };
const KINDS = ['corrected', 'readout'] as const;
const START = Date.UTC(2023, 0, 1);
const MONTH = 43_200;

const rows = (from: number, count: number, offset: number) =>
  Array.from(
    { length: count },
    (_, i) =>
      `${IMPORT_TUBE},${new Date(START + (from + i) * 60_000).toISOString()},${((from + i) % 1000) + offset}`,
  );
const csv = (lines: string[]) => `tubeIdentifier,observedAt,value\n${lines.join('\n')}\n`;
const files = {
  year: csv(rows(0, YEAR_ROWS, 0)),
  corrected: csv(rows(0, YEAR_ROWS, 0.5)),
  readout: csv(rows(YEAR_ROWS - MONTH, 2 * MONTH, 0)),
};

const pg = await startDatabaseServer(DURABLE_SETTINGS);
const times: Record<Name, Record<(typeof KINDS)[number], number[]>> = {
  this: { corrected: [], readout: [] },
  other: { corrected: [], readout: [] },
};
try {
  console.log(`Upsert A/B — ${await machineLine()}\n${pg.description}\n${rounds} rounds\n`);
  for (let round = 0; round < Number(rounds); round++) {
    for (const name of (round % 2 === 0 ? ['this', 'other'] : ['other', 'this']) as Name[]) {
      const dir = CHECKOUTS[name];
      const { connect } = await import(`${dir}/src/db/connect.ts`);
      const { migrate } = await import(`${dir}/src/db/migrate.ts`);
      const measurements = await import(`${dir}/src/importers/measurements/measurements.ts`);
      const { upsertRegistry } = await import(`${dir}/src/importers/registry/registry.ts`);
      const database = `bench_upsert_${name}`;
      await pg.dropDatabase(database);
      const sql = connect(await pg.emptyDatabase(database), { max: 2 });
      await migrate(sql);
      await upsertRegistry(sql, IMPORT_REGISTRY);
      const load = (text: string) =>
        measurements.importMeasurements(sql, Readable.from([text]), { name: 'bench' });
      await load(files.year);
      for (const kind of KINDS) {
        await measurements.vacuumMeasurements(sql);
        await pg.checkpoint();
        const started = performance.now();
        const done = await load(files[kind]);
        times[name][kind].push(performance.now() - started);
        if (round === 0) console.log(`${name}, ${kind}: ${JSON.stringify(done)}`);
      }
      await sql.end();
      await pg.dropDatabase(database);
    }
  }
  console.log();
  for (const kind of KINDS) {
    const ratios = times.this[kind].map((t, i) => t / times.other[kind][i]!);
    console.log(
      `${kind}: this ${median(times.this[kind]).toFixed(0)} ms, other ${median(times.other[kind]).toFixed(0)} ms; ` +
        `this / other ${spread(ratios)}`,
    );
  }
} finally {
  await pg.stop();
}

/**
 * Conditional requests with measurements in a TimescaleDB hypertable (PGlite with TimescaleDB, see
 * testkit/timescale.ts). That server takes no COPY FROM STDIN, so rows reach the import's SQL half
 * (writeStaged: the plain INSERT, then the upsert) through its staging table, as the importer's
 * TimescaleDB test does; registry and keys go through their real functions.
 */
import t from 'tap';
import { migrate, usesTimescaleDb } from '../../../src/db/migrate.js';
import { ErrorCollector } from '../../../src/importers/importErrors.js';
import { createStaging, writeStaged } from '../../../src/importers/measurements/stagedMeasurements.js';
import { startTimescale } from '../../../testkit/timescale.js';
import { startApi } from '../../helpers/api.js';
import { provesConditionalRequests } from '../../helpers/conditional.js';

const timescale = await startTimescale();
t.teardown(() => timescale.stop());

t.test('conditional requests on TimescaleDB', async (t) => {
  // pglite-socket serves one connection at a time: the test writes through the app's own pool of one.
  const api = await startApi(t, {
    databaseUrl: timescale.url,
    poolMax: 1,
    env: { KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' },
  });
  const sql = api.appSql;
  await migrate(sql);
  t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
  await provesConditionalRequests(t, api, sql, (rows) =>
    sql.begin(async (tx) => {
      await createStaging(tx);
      for (const [i, [tube, observedAt, value]] of rows.entries()) {
        await tx`insert into measurement_staging values (${i + 2}, ${tube}, ${observedAt}, ${value})`;
      }
      const tubes = new Set(rows.map(([tube]) => tube.replaceAll('-', '')));
      return await writeStaged(tx, { rows: rows.length, tubes }, new ErrorCollector(), 'data.csv');
    }),
  );
});

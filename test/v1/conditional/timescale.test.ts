/**
 * Conditional requests with measurements in a native TimescaleDB hypertable (testkit/timescale.ts),
 * written by the real importer; registry and keys go through their real functions.
 */
import t from 'tap';
import { usesTimescaleDb } from '../../../src/db/migrate.js';
import { startApi } from '../../helpers/api.js';
import { provesConditionalRequests } from '../../helpers/conditional.js';
import { freshDatabase, timescaleServerOrSkip } from '../../helpers/database.js';
import { rowImporter } from '../../helpers/importFixtures.js';

t.test('conditional requests on TimescaleDB', async (t) => {
  const server = timescaleServerOrSkip(t);
  if (!server) return;
  const db = await freshDatabase(t, { server });
  const api = await startApi(t, { db, env: { KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' } });
  t.ok(await usesTimescaleDb(db.sql), 'measurements is a hypertable');
  await provesConditionalRequests(t, api, db.sql, rowImporter(db.sql));
});

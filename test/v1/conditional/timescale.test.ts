/**
 * Conditional requests with measurements in a native TimescaleDB hypertable (testkit/timescale.ts),
 * written by the real importer; registry and keys go through their real functions.
 */
import t from 'tap';
import { provesConditionalRequests } from '../../helpers/conditional.js';
import { rowImporter } from '../../helpers/importFixtures.js';
import { timescaleApi } from '../../helpers/timescale.js';

t.test('conditional requests on TimescaleDB', async (t) => {
  const api = await timescaleApi(t, { KEY_CACHE_SECONDS: '0' });
  if (!api) return;
  await provesConditionalRequests(t, api, api.db.sql, rowImporter(api.db.sql));
});

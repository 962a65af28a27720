/**
 * Conditional requests on plain PostgreSQL, rows imported by the real importer (direct path first, the
 * staging path for re-imports and corrections); and what comes before a 304: key, limits, parameters
 * and access.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { createClientLimits } from '../../../src/limits/createClientLimits.js';
import { addKey, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { openStream } from '../../../testkit/openStream.js';
import { startApi } from '../../helpers/api.js';
import {
  checkNotModified,
  provesConditionalRequests,
  seriesPath,
  validatorsOf,
  WELLS,
} from '../../helpers/conditional.js';
import { get } from '../../helpers/http.js';
import { HEADER } from '../../helpers/importFixtures.js';
import { recordingLogger, settingsWith } from '../../helpers/limits.js';

t.test('conditional requests on plain PostgreSQL', async (t) => {
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  let imports = 0;
  await provesConditionalRequests(t, api, sql, async (rows) => {
    const csv = HEADER + rows.map((row) => row.join(',')).join('\n');
    await importMeasurements(sql, Readable.from([Buffer.from(csv)]), { name: `import ${++imports}` });
  });
});

t.test('a conditional request is an ordinary request up to its answer', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const [granted, hidden] = await addWell(sql, 'W', [{ number: '1' }, { number: '2' }]);
  const reader = await addKey(sql, { tubeIds: [granted!.id] });
  const nothing = await addKey(sql);
  const any = { 'if-none-match': '*', 'if-modified-since': 'Fri, 31 Dec 9999 23:59:59 GMT' };
  const cases: [string, string, Record<string, string>, number][] = [
    ['no key', seriesPath(granted!.identifier), {}, 401],
    ['no key, discovery', WELLS, {}, 401],
    ['a bad parameter', `${seriesPath(granted!.identifier)}&from=x`, { 'x-api-key': reader.key }, 400],
    [
      'a missing parameter',
      `/v1/groundwater-monitoring-tubes/${granted!.identifier}/measurements`,
      { 'x-api-key': reader.key },
      400,
    ],
    ['a key that reads nothing', seriesPath(granted!.identifier), { 'x-api-key': nothing.key }, 403],
    ['a key that reads nothing, discovery', WELLS, { 'x-api-key': nothing.key }, 403],
    ['a hidden tube', seriesPath(hidden!.identifier), { 'x-api-key': reader.key }, 404],
    ['an unknown tube', seriesPath('00000000-0000-4000-8000-000000000000'), { 'x-api-key': reader.key }, 404],
    ['a malformed tube', seriesPath('nope'), { 'x-api-key': reader.key }, 404],
  ];
  for (const [what, path, headers, status] of cases) {
    const response = await get(api.base, path, { ...headers, ...any });
    t.equal(response.status, status, `${what}: ${status}, not hidden by a 304`);
    t.equal(response.headers['content-type'], 'application/problem+json');
  }
});

t.test('a conditional request takes a token and a concurrency slot', async (t) => {
  const limits = await createClientLimits(
    settingsWith({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '0.001', CONCURRENCY_LIMIT: '1' }),
    { logger: recordingLogger() },
  );
  const api = await startApi(t, { limits });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'W', [{ number: '1' }]);
  // A year of minutes: far more than loopback's socket buffers take, so a paused stream stays open.
  const [from, to] = ['2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z'];
  await addRegularSeries(sql, tube!.id, from, to, '1 minute');
  const path = seriesPath(tube!.identifier, from, to);

  t.test('tokens: a 304 spends one like a 200', async (t) => {
    const { key } = await addKey(sql, { tubeIds: [tube!.id] });
    const validators = validatorsOf(t, await get(api.base, path, { 'x-api-key': key }));
    const conditional = { 'x-api-key': key, 'if-none-match': validators.etag };
    for (let i = 0; i < 2; i++) {
      const response = await get(api.base, path, conditional);
      checkNotModified(t, response, validators);
      t.ok(response.headers.ratelimit, 'RateLimit on the 304');
    }
    t.equal((await get(api.base, path, conditional)).status, 429, 'the burst of 3 is spent');
  });

  t.test('slots: a 304 waits for none, it is refused', async (t) => {
    const { key } = await addKey(sql, { tubeIds: [tube!.id] });
    const validators = validatorsOf(t, await get(api.base, path, { 'x-api-key': key }));
    // A paused series holds the key's one slot.
    const held = openStream(api.base, path, key);
    held.pause();
    await held.firstChunk;
    const refused = await get(api.base, path, { 'x-api-key': key, 'if-none-match': validators.etag });
    t.equal(refused.status, 429, 'no slot, no 304');
    held.abort();
    await held.done;
  });
});

/**
 * No process warning from any streamed response: every endpoint that streams a document, in each of its
 * formats, plain and compressed, read whole and left mid-stream. Each mechanism that waits for the end of
 * a response once added a 'close' listener of its own, which with Node's own went past the emitter's
 * limit and printed a MaxListenersExceededWarning for every streamed request.
 */
import t from 'tap';
import { FORMAT_NAMES, LATEST_FORMAT_NAMES } from '../../src/engine/write/writer.js';
import { seriesPath } from '../../testkit/apiPaths.js';
import { addKey, addNetwork } from '../../testkit/fixtures.js';
import { openStream } from '../../testkit/openStream.js';
import { startApi } from '../helpers/api.js';
import { get } from '../helpers/http.js';
import { LATEST, refreshLatest } from '../helpers/latest.js';
import { networkPath } from '../helpers/network.js';

const INTERVAL = { from: '2024-01-01T00:00:00Z', to: '2024-01-08T00:00:00Z' };

t.test('a streamed request of each endpoint emits no process warning', async (t) => {
  const warnings: Error[] = [];
  const record = (warning: Error) => warnings.push(warning);
  process.on('warning', record);
  t.teardown(() => process.off('warning', record));

  const api = await startApi(t);
  const tubes = await addNetwork(api.db.sql, 20, { ...INTERVAL, step: '15 minutes' });
  await refreshLatest(api.db.sql);
  const { key } = await addKey(api.db.sql, { allTubes: true });
  const endpoints = {
    series: { path: seriesPath(tubes[0]!.identifier, INTERVAL.from, INTERVAL.to), formats: FORMAT_NAMES },
    network: { path: networkPath(INTERVAL), formats: FORMAT_NAMES },
    latest: { path: `${LATEST}?tubes=${tubes[0]!.identifier}`, formats: LATEST_FORMAT_NAMES },
  };
  for (const [endpoint, { path, formats }] of Object.entries(endpoints)) {
    for (const format of formats) {
      for (const coding of ['identity', 'gzip']) {
        const what = `${endpoint} as ${format}, ${coding}`;
        const url = `${path}${path.includes('?') ? '&' : '?'}format=${format}`;
        const whole = await get(api.base, url, { 'x-api-key': key, 'accept-encoding': coding });
        t.equal(whole.status, 200, `${what}: read whole`);
        const left = openStream(api.base, url, key, { 'accept-encoding': coding });
        await left.firstChunk;
        left.abort();
        await left.done;
      }
    }
  }
  // A warning is emitted on the next tick after the listener that caused it.
  await new Promise((resolve) => setImmediate(resolve));
  t.same(
    warnings.map((warning) => `${warning.name}: ${warning.message}`),
    [],
    'no process warning',
  );
});

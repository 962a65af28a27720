/**
 * The network endpoint as an Apache Arrow IPC stream over real HTTP (docs/clients.md, "The network:
 * many tubes"), read by two readers and compared with the JSON (test/helpers/networkArrow.ts).
 */

import t, { type Test } from 'tap';
import { arrow } from '../../../src/engine/write/arrow.js';

const ARROW = arrow.mediaType;

import { addKey } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import { addOrderedNetwork, LOCAL_JANUARY, networkPath } from '../../helpers/network.js';
import { provesArrowAsJson } from '../../helpers/networkArrow.js';

const JANUARY = LOCAL_JANUARY;

t.test('the network as Arrow', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const { precise, empty, quoted, long } = await addOrderedNetwork(sql);
  const { key } = await addKey(sql, { tubeIds: [precise.id, empty.id, quoted.id, long.id] });
  const as = { 'x-api-key': key };
  const sameAsJson = (t: Test, query: Parameters<typeof provesArrowAsJson>[3], headers = {}) =>
    provesArrowAsJson(t, api.base, key, query, headers);

  t.test('raw', (t) => sameAsJson(t, JANUARY));
  t.test('aggregated', (t) => sameAsJson(t, { ...JANUARY, aggregate: 'P1D' }));
  t.test('listed tubes, gzip and br', async (t) => {
    const listed = { ...JANUARY, tubes: [quoted.identifier, precise.identifier] };
    await sameAsJson(t, listed, { 'accept-encoding': 'gzip' });
    await sameAsJson(t, listed, { 'accept-encoding': 'br' });
  });
  t.test('no measurements: the schema, the dictionaries and the end, no batch', async (t) => {
    await sameAsJson(t, { from: '2023-01-01T00:00:00Z', to: '2023-01-02T00:00:00Z' });
  });
  t.test('by Accept', async (t) => {
    const response = await get(api.base, networkPath(JANUARY), { ...as, accept: ARROW });
    t.equal(response.headers['content-type'], ARROW);
  });
});

/**
 * The network endpoint streams as one series does, whatever the number of tubes: the first byte before
 * the last tube is read, backpressure, a client that leaves, a cut-off without closing bytes, and the
 * request's limits (one token, one slot held for as long as it streams).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { addKey, addNetwork } from '../../../testkit/fixtures.js';
import { openStream } from '../../../testkit/openStream.js';
import { startApi } from '../../helpers/api.js';
import { appBackends, cutOffAfterFirstChunk, inTransaction } from '../../helpers/appSessions.js';
import { get } from '../../helpers/http.js';
import { networkPath } from '../../helpers/network.js';
import { scriptedLimits } from '../../helpers/scriptedLimits.js';
import { until } from '../../helpers/until.js';

const TUBES = 200;
/** Two weeks of quarter-hours per tube. */
const INTERVAL = { from: '2024-01-01T00:00:00Z', to: '2024-01-15T00:00:00Z' };
const ROWS_PER_TUBE = 14 * 96;

t.test('a network of tubes in one stream', async (t) => {
  const limits = scriptedLimits();
  // One connection: one not given back would make every later request hang.
  const api = await startApi(t, { poolMax: 1, limits });
  const { sql } = api.db;
  const tubes = await addNetwork(sql, TUBES, { ...INTERVAL, step: '15 minutes' });
  const { key } = await addKey(sql, { tubeIds: tubes.map((tube) => tube.id) });
  const last = tubes.at(-1)!.identifier;
  const path = networkPath(INTERVAL);

  t.test('every tube arrives, at the cost of one token and one slot while it streams', async (t) => {
    const admittedBefore = limits.admitted.length;
    const stream = openStream(api.base, path, key);
    await stream.firstChunk;
    t.equal(limits.held, 1, 'a slot is held while the response streams');
    const { complete, body } = await stream.done;
    t.ok(complete);
    const network = JSON.parse(body);
    t.equal(network.series.length, TUBES);
    t.equal(network.series.at(-1).tubeIdentifier, last, 'in natural order: 200 last');
    t.ok(
      network.series.every(
        (series: { measurements: unknown[] }) => series.measurements.length === ROWS_PER_TUBE,
      ),
      'every measurement of every tube',
    );
    t.equal(limits.admitted.length - admittedBefore, 1, 'one token for the whole network');
    await until(
      'the slot is given back',
      async () => limits.held,
      (held) => held === 0,
    );
  });

  t.test(
    'the first byte comes before the last tube is read, and a paused client holds the read back',
    async (t) => {
      const stream = openStream(api.base, path, key);
      const first = (await stream.firstChunk).toString();
      stream.pause();
      t.ok(first.startsWith('{"from":"2024-01-01T00:00:00Z"'), 'the head first');
      t.notOk(first.includes(last), 'the last tube is not in the first chunk');
      await sleep(1000);
      t.ok(
        inTransaction(await appBackends(api)),
        'the snapshot is still open: the read waits for the client',
      );
      stream.resume();
      const { complete, body } = await stream.done;
      t.ok(complete);
      t.ok(body.includes(last), 'and then the rest comes');
    },
  );

  t.test('a client that leaves ends the read and gives the connection and the slot back', async (t) => {
    const stream = openStream(api.base, path, key);
    await stream.firstChunk;
    stream.pause();
    stream.abort();
    await until(
      'the transaction ended',
      async () => inTransaction(await appBackends(api)),
      (open) => !open,
    );
    await until(
      'the slot is given back',
      async () => limits.held,
      (held) => held === 0,
    );
    const next = await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': key });
    t.equal(next.status, 200, 'the one pooled connection is free again');
  });

  const cutOff = (t: Test, extra = '') => cutOffAfterFirstChunk(t, api, networkPath(INTERVAL, extra), key);

  t.test('a database error mid-stream cuts the JSON off without its closing bytes', async (t) => {
    const { body } = await cutOff(t);
    t.ok(body.startsWith('{"from":'), 'after a good start');
    t.notOk(body.endsWith(']}]}'), 'never a short but well-formed document');
    t.throws(() => JSON.parse(body));
    t.ok(
      api.logLines.some((line) => line.includes('response cut off')),
      'logged',
    );
  });

  t.test('and the Arrow stream without its end-of-stream marker', async (t) => {
    const { bytes } = await cutOff(t, '&format=arrow');
    t.ok(bytes.length > 0, 'after a good start');
    t.notSame(
      bytes.subarray(-8),
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
      'no end-of-stream marker',
    );
  });

  t.test('and the CSV without its last CRLF', async (t) => {
    const { body } = await cutOff(t, '&format=csv');
    t.ok(body.startsWith('tubeIdentifier,observedAt,value,unit,verticalDatum\r\n'), 'after a good start');
    t.notOk(body.endsWith('\r\n'), 'ends inside a line');
    const next = await get(api.base, networkPath(INTERVAL, `&format=csv&tubes=${last}`), {
      'x-api-key': key,
    });
    t.equal(next.status, 200, 'the pool recovers');
    t.equal(next.body.split('\r\n').length, 1 + ROWS_PER_TUBE + 1, 'the next CSV is whole');
  });
});

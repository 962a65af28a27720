/**
 * The streaming path of the measurements endpoint against a year of 1-minute data (527,040 rows):
 * backpressure, a client that leaves, a database that fails before and after the first byte.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { createMetrics } from '../../../src/http/observability/metrics.js';
import { addYearTube } from '../../../testkit/fixtures.js';
import { openStream } from '../../../testkit/openStream.js';
import { startApi } from '../../helpers/api.js';
import { appBackends, cutOffAfterFirstChunk, inTransaction } from '../../helpers/appSessions.js';
import { get } from '../../helpers/http.js';
import { scriptedLimits } from '../../helpers/scriptedLimits.js';

const YEAR = '?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';
const ROWS_IN_YEAR = 366 * 24 * 60;

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 3000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
  return performance.now() - started;
}

t.test('streaming a year of 1-minute data', async (t) => {
  // One connection in the app's pool: a connection not given back would make every later request hang.
  const limits = scriptedLimits();
  const metrics = createMetrics({ limits, poolMax: 1 });
  const api = await startApi(t, { poolMax: 1, limits, metrics });
  const cutOffCount = async () =>
    (await metrics.registry.getSingleMetric('gwapi_series_cut_off_total')!.get()).values[0]!.value;
  const { sql } = api.db;
  const { key, seriesPath } = await addYearTube(sql);
  const path = `${seriesPath}${YEAR}`;

  let fullStreamMs = 0;
  t.test('the whole year arrives, complete and in order', async (t) => {
    const started = performance.now();
    const response = await get(api.base, path, { 'x-api-key': key });
    fullStreamMs = performance.now() - started;
    t.equal(response.status, 200);
    t.equal(response.headers['transfer-encoding'], 'chunked', 'streamed, not buffered');
    const series = JSON.parse(response.body);
    t.equal(series.measurements.length, ROWS_IN_YEAR);
    t.equal(series.measurements[0].observedAt, '2024-01-01T00:00:00Z');
    t.equal(series.measurements.at(-1).observedAt, '2024-12-31T23:59:00Z');
    let ordered = true;
    for (let i = 1; i < series.measurements.length; i++) {
      if (series.measurements[i - 1].observedAt >= series.measurements[i].observedAt) ordered = false;
    }
    t.ok(ordered, 'strictly chronological');
    t.comment(
      `527,040 measurements, ${(response.body.length / 1e6).toFixed(1)} MB in ${fullStreamMs.toFixed(0)} ms`,
    );
    const line = api.logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.rows !== null);
    t.equal(line?.rows, ROWS_IN_YEAR, 'the request log counts the rows streamed');
    t.equal(line?.complete, true);
  });

  t.test('a paused client holds back the cursor, not the server', async (t) => {
    const stream = openStream(api.base, path, key);
    await stream.firstChunk;
    stream.pause();
    // Longer than the whole year takes when read at full speed: without backpressure the cursor would
    // be done, and the transaction over, by the end of the pause.
    await sleep(Math.max(1500, fullStreamMs * 2));
    t.ok(inTransaction(await appBackends(api)), 'the snapshot is still open: the cursor waits');
    stream.resume();
    const { complete, body } = await stream.done;
    t.ok(complete);
    t.equal(JSON.parse(body).measurements.length, ROWS_IN_YEAR, 'and then it completes');
  });

  t.test('a client that leaves ends the cursor and gives the connection back at once', async (t) => {
    const cutOffBefore = await cutOffCount();
    const stream = openStream(api.base, path, key);
    await stream.firstChunk;
    stream.pause();
    t.ok(inTransaction(await appBackends(api)), 'streaming from an open transaction');
    stream.abort();
    const ms = await waitFor(async () => !inTransaction(await appBackends(api)), 'the transaction ended');
    t.ok(ms < 1000, `transaction over ${ms.toFixed(0)} ms after the client left`);
    // The pool has one connection: this answers only if it was given back.
    const next = await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': key });
    t.equal(next.status, 200);
    await waitFor(
      async () => api.logLines.some((l) => l.includes('"complete":false')),
      'the abandoned request is logged',
    );
    t.equal(await cutOffCount(), cutOffBefore, 'a client that left is not a response cut off');
  });

  const cutOff = (t: Test, headers: Record<string, string> = {}) =>
    cutOffAfterFirstChunk(t, api, path, key, headers);

  t.test('a database error mid-stream cuts the response off', async (t) => {
    const cutOffBefore = await cutOffCount();
    const { body } = await cutOff(t);
    t.ok(body.startsWith('{"tubeIdentifier":'), 'after a good start');
    t.notOk(body.endsWith(']}'), 'never a short but well-formed document');
    t.throws(() => JSON.parse(body));
    const logged = api.logLines.find((l) => l.includes('response cut off'));
    t.ok(logged, 'the failure is logged');
    t.equal(await cutOffCount(), cutOffBefore + 1, 'and counted in gwapi_series_cut_off_total');
    const recovered = await get(api.base, path.replace('2025-01-01', '2024-01-02'), { 'x-api-key': key });
    t.equal(recovered.status, 200, 'the pool recovers; the next request does not pay for the lost session');
    t.equal(JSON.parse(recovered.body).measurements.length, 1440);
  });

  t.test('a CSV is cut off as the JSON is: it never ends in the CRLF of a whole file', async (t) => {
    const { body } = await cutOff(t, { accept: 'text/csv' });
    t.ok(
      body.startsWith('observedAt,value,unit,verticalDatum\r\n2024-01-01T00:00:00Z,'),
      'after a good start',
    );
    t.ok(body.length > 0 && !body.endsWith('\r\n'), 'ends inside a line');
    const csv = await get(api.base, `${path.replace('2025-01-01', '2024-01-02')}&format=csv`, {
      'x-api-key': key,
    });
    t.equal(csv.body.split('\r\n').length, 1 + 1440 + 1, 'the next CSV is whole: header, a day, final CRLF');
  });

  t.test('a client that leaves a CSV gives the connection back at once', async (t) => {
    const stream = openStream(api.base, path, key, { accept: 'text/csv' });
    await stream.firstChunk;
    stream.pause();
    stream.abort();
    const ms = await waitFor(async () => !inTransaction(await appBackends(api)), 'the transaction ended');
    t.ok(ms < 1000, `transaction over ${ms.toFixed(0)} ms after the client left`);
  });

  t.test('a database error before the first byte is a 500 that says nothing about internals', async (t) => {
    await sql`alter table measurements rename to measurements_elsewhere`;
    t.teardown(() => sql`alter table measurements_elsewhere rename to measurements`);
    const response = await get(api.base, path, { 'x-api-key': key });
    t.equal(response.status, 500);
    t.equal(response.headers['content-type'], 'application/problem+json');
    t.equal(response.headers['api-version'], '1.4.0');
    const body = JSON.parse(response.body);
    t.same(Object.keys(body).sort(), ['detail', 'instance', 'status', 'title', 'type']);
    t.equal(body.title, 'Internal Server Error');
    for (const leak of ['measurements', 'relation', 'exist', 'select', 'postgres', 'at ', '.ts', '.js']) {
      t.notOk(body.detail.toLowerCase().includes(leak), `no "${leak}" in the detail`);
    }
    const requestId = response.headers['x-request-id'];
    t.ok(body.detail.includes(requestId), 'the detail names the request id');
    const logged = api.logLines
      .map((l) => JSON.parse(l))
      .find((l) => l.level === 50 && l.reqId === requestId);
    t.ok(logged, 'the error is logged under the request id');
    t.match(logged?.err?.message, /measurements/, 'with the driver message, in the log only');
  });
});

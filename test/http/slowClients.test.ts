/**
 * Slow senders cannot hold a connection: a request head must arrive within the request timeout (then a
 * 408 problem and the connection is closed), a body is never waited for, and a slow *reader* of a long
 * response is not cut by either.
 */
import { connect } from 'node:net';
import t from 'tap';
import { REQUEST_TIMEOUT_MS } from '../../src/app.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { openStream } from '../../testkit/openStream.js';
import { startApi } from '../helpers/api.js';
import { parseRaw } from '../helpers/http.js';

const TIMEOUT_MS = 1500;
/** Node looks for expired requests once a second (app.ts). */
const CLOSED_WITHIN_MS = TIMEOUT_MS + 2500;

/** Sends `head`, then `drip` every 200 ms for as long as the connection is open; what came back, and when. */
function trickle(port: number, head: string, drip: string): Promise<{ received: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    const dripping = setInterval(() => socket.writable && socket.write(drip), 200);
    const giveUp = setTimeout(() => socket.destroy(new Error('still open after 20 s')), 20_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearInterval(dripping);
      clearTimeout(giveUp);
      resolve({ received: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started });
    });
  });
}

t.test('the request timeout is finite by default', async (t) => {
  const api = await startApi(t);
  t.equal(api.app.server.requestTimeout, REQUEST_TIMEOUT_MS);
  t.ok(REQUEST_TIMEOUT_MS > 0 && REQUEST_TIMEOUT_MS <= 60_000, `${REQUEST_TIMEOUT_MS} ms`);
});

t.test('slow senders and slow readers', async (t) => {
  const api = await startApi(t, { requestTimeoutMs: TIMEOUT_MS });
  const [tube] = await addWell(api.db.sql, 'Well', [{ number: '1' }]);
  await addRegularSeries(api.db.sql, tube!.id, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z', '1 minute');
  const { key } = await addKey(api.db.sql, { tubeIds: [tube!.id] });

  t.test('a head that never ends: 408 problem, connection closed', async (t) => {
    const { received, ms } = await trickle(
      api.port,
      'GET /v1/groundwater-monitoring-wells HTTP/1.1\r\nHost: x\r\n',
      'X-Drip: 1\r\n',
    );
    t.ok(ms < CLOSED_WITHIN_MS, `closed after ${Math.round(ms)} ms`);
    const response = parseRaw(received);
    t.equal(response.status, 408);
    t.equal(response.headers['content-type'], 'application/problem+json');
    t.equal(response.headers['api-version'], '1.4.0');
    t.match(JSON.parse(response.body), { type: 'about:blank', title: 'Request Timeout', status: 408 });
  });

  t.test('a body that never ends: answered, and the connection closed at once', async (t) => {
    const head = `GET /v1/groundwater-monitoring-wells HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Length: 100000\r\n\r\n`;
    const { received, ms } = await trickle(api.port, head, 'x');
    // No endpoint reads a body: the answer does not wait for it, and the connection is not kept for it.
    t.ok(ms < TIMEOUT_MS, `closed after ${Math.round(ms)} ms`);
    const response = parseRaw(received);
    t.equal(response.status, 200);
    t.equal(response.headers.connection, 'close');
  });

  t.test('a reader slower than the timeout still gets the whole series', async (t) => {
    const stream = openStream(
      api.base,
      `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements?from=2024-01-01T00:00:00Z&to=2024-03-01T00:00:00Z`,
      key,
    );
    await stream.firstChunk;
    stream.pause();
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
    stream.resume();
    const { complete, body } = await stream.done;
    t.ok(complete, 'the response ended properly');
    t.equal(JSON.parse(body).measurements.length, 60 * 24 * 60);
  });
});

/**
 * Graceful shutdown of a real `gwapi serve` process with a year-long stream in flight (527,040
 * measurements, ~28 MB: far more than the server's read-ahead and the kernel's socket buffers, so a
 * client that stops reading holds the stream mid-way for as long as it likes).
 *
 * On SIGTERM the replica stops accepting connections and fails readiness at once, lets running
 * streams finish up to SHUTDOWN_GRACE_SECONDS, cuts what still runs, closes pool and Redis, exits 0.
 */
import { once } from 'node:events';
import { type Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import type { Replica } from '../../../testkit/gwapi.js';
import { addSeriesFixture } from '../../../testkit/seriesFixture.js';
import { freshDatabase } from '../../helpers/database.js';
import { parseRaw } from '../../helpers/http.js';
import { startReplica } from '../../helpers/serve.js';

const ROWS_IN_YEAR = 366 * 24 * 60;
const YEAR = '?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';
/** What the process may take beyond the deadline: closing the pool and Redis, and exiting. */
const EXIT_MARGIN_MS = 5000;

/** Resolves with the exit code once the process has ended. */
async function exitCode(replica: Replica): Promise<number | null> {
  const { child } = replica;
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  return child.exitCode;
}

async function untilLogged(replica: Replica, message: string, timeoutMs = 10_000): Promise<void> {
  const started = performance.now();
  while (!replica.logs.some((line) => line.msg.startsWith(message))) {
    if (performance.now() - started > timeoutMs) throw new Error(`"${message}" was not logged`);
    await sleep(10);
  }
}

/** Whether a new TCP connection to `port` is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** A raw HTTP/1.1 connection: requests are written as they are, and everything received is kept. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = once(socket, 'close').then(() => Buffer.concat(chunks).toString('latin1'));
  return {
    socket,
    closed,
    received: () => chunks.reduce((sum, chunk) => sum + chunk.length, 0),
    get(path: string, headers: Record<string, string> = {}) {
      const lines = Object.entries({ Host: 'gwapi', ...headers }).map(([name, value]) => `${name}: ${value}`);
      socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    },
  };
}

/** A GET read at the test's pace through `agent`; `done` says whether the body ended properly. */
function streamThrough(agent: Agent | false, url: string, key: string) {
  let pause = () => {};
  let resume = () => {};
  let gotFirst: () => void = () => {};
  const firstChunk = new Promise<void>((resolve) => (gotFirst = resolve));
  const done = new Promise<{ complete: boolean; body: string; connection?: string }>((resolve, reject) => {
    const req = request(url, { headers: { 'x-api-key': key }, agent }, (res) => {
      pause = () => res.pause();
      resume = () => res.resume();
      const chunks: Buffer[] = [];
      const finish = (complete: boolean) =>
        resolve({ complete, body: Buffer.concat(chunks).toString(), connection: res.headers.connection });
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        gotFirst();
      });
      res.on('end', () => finish(true));
      res.on('error', () => finish(false));
    });
    req.on('error', reject);
    req.end();
  });
  return { firstChunk, done, pause: () => pause(), resume: () => resume() };
}

t.test('graceful shutdown of gwapi serve', async (t) => {
  const db = await freshDatabase(t);
  const { identifier, key } = await addSeriesFixture(db.sql);
  const path = `/v1/groundwater-monitoring-tubes/${identifier}/measurements${YEAR}`;

  const serve = (t: Test, graceSeconds: number) =>
    startReplica(t, { DATABASE_URL: db.url, SHUTDOWN_GRACE_SECONDS: String(graceSeconds) });

  t.test('a stream that ends within the deadline completes, then the process exits 0', async (t) => {
    const replica = await serve(t, 30);
    // Keep-alive, as a load balancer's connections are: after the response the connection stays open,
    // and must not hold the shutdown up until its keep-alive timeout.
    const { Agent } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => agent.destroy());
    const stream = streamThrough(agent, `${replica.base}${path}`, key);
    await stream.firstChunk;
    stream.pause();

    replica.child.kill('SIGTERM');
    await untilLogged(replica, 'shutting down');
    await sleep(500);
    t.equal(replica.child.exitCode, null, 'still running while the stream runs');
    stream.resume();
    const { complete, body } = await stream.done;
    const streamEnded = performance.now();
    t.ok(complete, 'the response ended properly');
    const series = JSON.parse(body);
    t.equal(series.measurements.length, ROWS_IN_YEAR, 'every measurement arrived');
    t.equal(series.measurements.at(-1).observedAt, '2024-12-31T23:59:00Z');

    t.equal(await exitCode(replica), 0, 'exit code 0');
    const exitMs = performance.now() - streamEnded;
    t.ok(
      exitMs < EXIT_MARGIN_MS,
      `exited ${exitMs.toFixed(0)} ms after the stream ended, not at the deadline`,
    );
    t.notOk(
      replica.logs.some((line) => line.msg.startsWith('shutdown deadline reached')),
      'nothing was cut',
    );
  });

  t.test('a stream still running at the deadline is cut off, and the process exits 0', async (t) => {
    const graceSeconds = 1;
    const replica = await serve(t, graceSeconds);
    const stream = streamThrough(false, `${replica.base}${path}`, key);
    await stream.firstChunk;
    stream.pause();

    const signalled = performance.now();
    replica.child.kill('SIGTERM');
    const code = await exitCode(replica);
    const exitMs = performance.now() - signalled;
    t.equal(code, 0, 'exit code 0');
    t.ok(
      exitMs >= graceSeconds * 1000 - 50,
      `the stream had its ${graceSeconds} s (exited after ${exitMs.toFixed(0)} ms)`,
    );
    t.ok(
      exitMs < graceSeconds * 1000 + EXIT_MARGIN_MS,
      `exited ${exitMs.toFixed(0)} ms after SIGTERM (deadline ${graceSeconds} s + ${EXIT_MARGIN_MS} ms)`,
    );
    t.ok(
      replica.logs.some((line) => line.msg.startsWith('shutdown deadline reached')),
      'the cut is logged',
    );

    stream.resume();
    const { complete, body } = await stream.done;
    t.notOk(complete, 'the client sees an incomplete response');
    t.ok(body.startsWith('{"tubeIdentifier":'), 'after a good start');
    t.throws(() => JSON.parse(body), 'never a short document that parses');
  });

  t.test(
    'while draining: no new connections, and readiness answers 503 where it is still asked',
    async (t) => {
      const replica = await serve(t, 30);
      const port = Number(new URL(replica.base).port);
      const connection = rawConnection(port);
      connection.get(path, { 'X-API-Key': key });
      // The stream is under way and held back: the client reads nothing more for now.
      while (connection.received() === 0) await sleep(10);
      connection.socket.pause();

      replica.child.kill('SIGTERM');
      await untilLogged(replica, 'shutting down');
      let attempts = 0;
      while (!(await refused(port))) {
        if (++attempts > 100) throw new Error('new connections are still accepted');
        await sleep(10);
      }
      t.pass('a new connection is refused: the load balancer checks and sends elsewhere');

      // A request pipelined on the busy connection is answered after the stream ahead of it.
      connection.get('/health/ready');
      await sleep(200);
      connection.socket.resume();
      const received = await connection.closed;
      const readyAt = received.lastIndexOf('HTTP/1.1 ');
      t.ok(readyAt > 0, 'two responses on the connection');
      const stream = parseRaw(received.slice(0, readyAt));
      t.equal(stream.status, 200);
      t.ok(stream.body.endsWith('0\r\n\r\n'), 'the stream ended with its last chunk');
      const ready = parseRaw(received.slice(readyAt));
      t.equal(ready.status, 503, 'readiness fails');
      t.equal(ready.headers.connection, 'close', 'and the connection is closed after it');
      t.equal(ready.headers['api-version'], '1.4.0');
      const report = JSON.parse(ready.body);
      t.equal(report.status, 'fail');
      t.match(report.checks.shutdown, { status: 'fail', output: /shutting down/ });
      t.equal(report.checks.database.status, 'pass', 'only the shutdown fails');

      t.equal(await exitCode(replica), 0, 'exit code 0');
    },
  );
});

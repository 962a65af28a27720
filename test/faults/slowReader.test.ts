/**
 * A slow reader of a year-long series (527,040 measurements, ~28 MB of JSON) holds the server back,
 * not its memory: while the client reads nothing, the server stops fetching (the rows it has streamed
 * stay put, a small part of the year: read-ahead and socket buffers); while it trickles, the server
 * keeps only a bounded lead; and the server's resident memory stays within a bound throughout, under
 * a 64 MB old generation in which the year held at once would not fit (test/v1/series/memory.test.ts shows
 * the same for a fast reader). The reader then takes the rest and gets every measurement.
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { seriesPath } from '../../testkit/apiPaths.js';
import { startFaultReplica } from '../../testkit/faults.js';
import { addSeriesFixture } from '../../testkit/seriesFixture.js';
import { freshDatabase } from '../helpers/database.js';

const ROWS_IN_YEAR = 366 * 24 * 60;
/** Growth of resident memory allowed (as test/v1/series/memory.test.ts: most of it garbage not yet collected). */
const GROWTH_BOUND_MB = 64;
/**
 * How far the server may run ahead of what the client has read, in measurements (~55 bytes each):
 * the stream's read-ahead (512 KB), one batch being fetched, and both sockets' kernel buffers, which
 * Linux grows on loopback to a few MB each. A server that did not wait for the client would be the
 * whole year ahead.
 */
const LEAD_BOUND_ROWS = 200_000;
const TRICKLE_BYTES = 64 * 1024;
const TRICKLE_EVERY_MS = 50;

t.test('a slow reader of a year-long series holds bounded server memory', async (t) => {
  const db = await freshDatabase(t);
  const { identifier, key } = await addSeriesFixture(db.sql);
  // Tight, so that buffering the year cannot succeed (see test/v1/series/memory.test.ts).
  const replica = await startFaultReplica(t, db.url, {
    NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=16',
  });
  const streamed = async () => (await replica.metric('gwapi_measurements_streamed_total')) ?? 0;
  const path = (to: string) => seriesPath(identifier, '2024-01-01T00:00:00Z', to);

  // Warm up: every module loaded and every code path compiled once before measuring.
  const warmUp = await fetch(`${replica.base}${path('2024-01-08T00:00:00Z')}`, {
    headers: { 'x-api-key': key },
  });
  t.equal(JSON.parse(await warmUp.text()).measurements.length, 7 * 1440, 'warm-up: a week');
  const baselineMb = replica.residentMb();
  const baselineRows = await streamed();
  let peakMb = baselineMb;
  const sampler = setInterval(() => (peakMb = Math.max(peakMb, replica.residentMb())), 20);
  t.teardown(() => clearInterval(sampler));

  const chunks: Buffer[] = [];
  let received = 0;
  const rowsReceived = () => Math.round(received / (28e6 / ROWS_IN_YEAR));
  const ended = new Promise<boolean>((resolve) => {
    const req = request(`${replica.base}${path('2025-01-01T00:00:00Z')}`, {
      headers: { 'x-api-key': key },
      agent: false,
    });
    req.on('response', (res) => {
      // Not flowing: the test reads what it wants, when it wants; the rest waits in the socket.
      res.pause();
      const take = (bytes?: number) => {
        // read(n) gives nothing while fewer than n bytes are buffered: ask for at most what is there.
        const chunk = res.read(bytes && Math.min(bytes, res.readableLength)) as Buffer | null;
        if (chunk) {
          chunks.push(chunk);
          received += chunk.length;
        }
      };
      res.on('end', () => resolve(true));
      res.on('error', () => resolve(false));
      reader.take = take;
      reader.flow = () => {
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          received += chunk.length;
        });
        res.resume();
      };
    });
    req.on('error', () => resolve(false));
    req.end();
  });
  const reader: { take?: (bytes?: number) => void; flow?: () => void } = {};
  while (!reader.take) await sleep(10);

  // Phase 1: the client reads nothing. The server fills the buffers, then waits.
  await sleep(1500);
  const stalled = (await streamed()) - baselineRows;
  await sleep(1500);
  const stillStalled = (await streamed()) - baselineRows;
  t.equal(stillStalled, stalled, `while nothing is read, the server stops at ${stalled} measurements`);
  t.ok(stalled < LEAD_BOUND_ROWS, `which is a small part of the year (bound ${LEAD_BOUND_ROWS})`);

  // Phase 2: the client trickles (64 KB every 50 ms, ~1.3 MB/s); the server's lead stays bounded.
  let largestLead = 0;
  for (let i = 0; i < 60; i++) {
    reader.take!(TRICKLE_BYTES);
    await sleep(TRICKLE_EVERY_MS);
    if (i % 10 === 9) largestLead = Math.max(largestLead, (await streamed()) - baselineRows - rowsReceived());
  }
  t.ok(
    largestLead < LEAD_BOUND_ROWS,
    `while it trickles, the server is at most ${largestLead} measurements ahead`,
  );

  // Phase 3: the rest, as fast as it comes.
  reader.flow!();
  t.ok(await ended, 'the response ended properly');
  clearInterval(sampler);
  const series = JSON.parse(Buffer.concat(chunks).toString());
  t.equal(series.measurements.length, ROWS_IN_YEAR, 'every measurement arrived');
  const growthMb = peakMb - baselineMb;
  t.comment(
    `paused: server stopped at ${stalled} measurements; trickling: at most ${largestLead} ahead; ` +
      `RSS ${baselineMb.toFixed(0)} MB → peak ${peakMb.toFixed(0)} MB (+${growthMb.toFixed(1)} MB)`,
  );
  t.ok(
    growthMb < GROWTH_BOUND_MB,
    `server memory grew by ${growthMb.toFixed(1)} MB (bound ${GROWTH_BOUND_MB} MB)`,
  );
});

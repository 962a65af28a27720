/**
 * A page of measurements reuses the memory of its chunks once the socket has sent them
 * (src/engine/write/recycledChunks.ts): never before. A reader that stops after each chunk makes the
 * socket fill and drain again and again; the body it gets must be, byte for byte, the one an injected
 * request gets, which never gives a chunk back. Reusing a chunk when the writer asks for the next one
 * (rather than at the socket's drain) fails this test.
 */
import { get } from 'node:http';
import t from 'tap';
import { RecycledChunks } from '../../../src/engine/write/recycledChunks.js';
import { addKey, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';

t.test('memory is reused only once given back, and only its own', async (t) => {
  const chunks = new RecycledChunks();
  const first = chunks.buffer(1000);
  t.not(chunks.buffer(1000).buffer, first.buffer, 'not given back: fresh memory');
  chunks.recycle(first);
  chunks.recycle(first);
  const again = chunks.buffer(900);
  t.equal(again.buffer, first.buffer, 'given back: reused');
  t.equal(again.length, 900);
  t.not(chunks.buffer(900).buffer, first.buffer, 'given back once, reused once');
  const foreign = Buffer.from('a chunk of the shared pool');
  chunks.recycle(foreign);
  t.not(chunks.buffer(10).buffer, foreign.buffer, 'memory of its own only');
});

t.test('room: all of the memory; what is kept unused is bounded; made as large as the largest', async (t) => {
  const chunks = new RecycledChunks(2500);
  const large = chunks.room(1000);
  t.ok(large.length >= 1000, 'room for at least as many bytes');
  const small = chunks.room(10);
  t.equal(small.length, large.length, 'memory made for a small chunk is as large as the largest made');
  const third = chunks.room(10);
  chunks.recycle(large.subarray(0, 5));
  chunks.recycle(small);
  chunks.recycle(third);
  const reused = [chunks.room(1), chunks.room(1), chunks.room(1)].map((room) => room.buffer);
  t.ok(reused.includes(large.buffer) && reused.includes(small.buffer), 'kept while within the bound');
  t.notOk(reused.includes(third.buffer), 'given back beyond the bound: left to the collector');
});

/**
 * The body of `url`, read by a client that waits `pauseMs` after each chunk, and `firstPauseMs` after
 * the first (long enough for the kernel's buffers to fill and the server to hold chunks unsent).
 */
function slowlyRead(url: string, key: string, pauseMs: number, firstPauseMs = pauseMs): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'x-api-key': key } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        response.pause();
        setTimeout(() => response.resume(), chunks.length === 1 ? firstPauseMs : pauseMs);
      });
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** The features' bytes: what follows them has the response's own timeStamp and host. */
const featuresOf = (body: Buffer) => body.subarray(0, body.indexOf('],"numberMatched":'));

t.test('a page read slowly over a socket is the page as written', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Well', [{ number: '1' }]);
  // 20,000 minutes: ten batches of 2,000 features, each chunk larger than the socket's buffers.
  await addRegularSeries(sql, tube!.id, '2024-01-01T00:00:00Z', '2024-01-14T21:20:00Z', '1 minute');
  const { key } = await addKey(sql, { tubeIds: [tube!.id] });
  const path = `/v1/ogc/collections/measurements/items?tubeIdentifier=${tube!.identifier}&limit=20000`;

  const injected = await api.app.inject({ url: path, headers: { 'x-api-key': key } });
  t.equal(injected.statusCode, 200);
  const page = JSON.parse(injected.body) as { numberReturned: number; features: { id: string }[] };
  t.equal(page.numberReturned, 20_000);
  t.equal(page.features.at(-1)?.id, `${tube!.identifier}:2024-01-14T21:19:00Z`);

  const read = await slowlyRead(`${api.base}${path}`, key, 2);
  const features = featuresOf(injected.rawPayload);
  t.ok(features.length > 5_000_000, `${features.length} bytes of features`);
  t.ok(featuresOf(read).equals(features), 'the same bytes');
});

t.test('pages of two keys read at once share chunk memory and keep their own bytes', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const pages = await Promise.all(
    ['North', 'South'].map(async (name, i) => {
      const [tube] = await addWell(sql, name, [{ number: '1' }]);
      // 28,800 minutes each (more than the kernel's buffers hold), in different months, so that a
      // chunk of one would show in the other.
      const from = `2024-0${i + 1}-01T00:00:00Z`;
      const to = `2024-0${i + 1}-21T00:00:00Z`;
      await addRegularSeries(sql, tube!.id, from, to, '1 minute');
      const { key } = await addKey(sql, { tubeIds: [tube!.id] });
      const path = `/v1/ogc/collections/measurements/items?tubeIdentifier=${tube!.identifier}&limit=28800`;
      return { key, path };
    }),
  );
  const expected = await Promise.all(
    pages.map(async ({ key, path }) => {
      const injected = await api.app.inject({ url: path, headers: { 'x-api-key': key } });
      t.equal(injected.statusCode, 200);
      return featuresOf(injected.rawPayload);
    }),
  );
  for (let round = 0; round < 3; round++) {
    // One reader that stalls and one that does not: the second's page is written while the first's
    // socket still holds chunks, in memory that the pages share.
    const read = await Promise.all(
      pages.map(({ key, path }, i) =>
        i === round % 2
          ? slowlyRead(`${api.base}${path}`, key, 1, 300)
          : slowlyRead(`${api.base}${path}`, key, 0),
      ),
    );
    read.forEach((body, i) => {
      t.ok(featuresOf(body).equals(expected[i]!), `round ${round}: page ${i + 1}, its own bytes`);
    });
  }
});

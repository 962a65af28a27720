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

/** The body of `url`, read by a client that waits `pauseMs` after each chunk. */
function slowlyRead(url: string, key: string, pauseMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'x-api-key': key } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        response.pause();
        setTimeout(() => response.resume(), pauseMs);
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

/**
 * Bulk documents’ turns on the event loop: one turn per pass of the loop, in the order asked, and
 * whatever else became ready runs between two turns; paced while another request is being answered.
 */
import Fastify from 'fastify';
import t from 'tap';
import { BulkTurns } from '../../src/http/bulkTurns.js';

const nextPass = () => new Promise<void>((resolve) => setImmediate(resolve));

t.test('one turn per pass of the event loop, in the order asked', async (t) => {
  const turns = new BulkTurns();
  const order: string[] = [];
  const documents = ['a', 'b', 'c'].map((name) => turns.turn().then(() => order.push(name)));
  // Asked after the turns: runs in the first pass, before the second turn.
  setImmediate(() => order.push('short'));
  await nextPass();
  await nextPass();
  t.same(order.slice(0, 2), ['a', 'short'], 'the first turn, then the other work of that pass');
  await Promise.all(documents);
  t.same(order, ['a', 'short', 'b', 'c']);
});

t.test('a document that asks again waits behind those already waiting', async (t) => {
  const turns = new BulkTurns();
  const order: string[] = [];
  const loop = async (name: string, chunks: number) => {
    for (let chunk = 0; chunk < chunks; chunk++) {
      await turns.turn();
      order.push(name);
    }
  };
  await Promise.all([loop('a', 3), loop('b', 3)]);
  t.same(order, ['a', 'b', 'a', 'b', 'a', 'b'], 'they alternate');
  // Nothing waits any more: a new turn comes in the next pass.
  const started = performance.now();
  await turns.turn();
  t.ok(performance.now() - started < 50, 'an idle gate of turns gives one at once');
});

t.test('while another request is answered, a turn every paceMs', async (t) => {
  const turns = new BulkTurns(30);
  const app = Fastify();
  turns.countRequests(app);
  let answer: (() => void) | undefined;
  app.get('/short', (_request, reply) => {
    answer = () => void reply.send('done');
  });
  app.get('/bulk', async (_request, reply) => {
    turns.bulkResponse(reply);
    const started = performance.now();
    for (let chunk = 0; chunk < 10; chunk++) await turns.turn();
    return { ms: performance.now() - started };
  });
  t.teardown(() => app.close());
  const alone = (await app.inject('/bulk')).json().ms;
  t.ok(alone < 30, `a bulk response alone: 10 turns in ${Math.round(alone)} ms`);
  const short = app.inject('/short');
  while (!answer) await nextPass();
  const beside = (await app.inject('/bulk')).json().ms;
  t.ok(beside >= 270, `beside a request being answered: 10 turns in ${Math.round(beside)} ms`);
  answer();
  await short;
  const after = (await app.inject('/bulk')).json().ms;
  t.ok(after < 30, `once it is answered, at full speed again (${Math.round(after)} ms)`);
});

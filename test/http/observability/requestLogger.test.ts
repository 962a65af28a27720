/**
 * request.log (lazyRequestLogger): a real pino logger, whose child is made only when a request logs
 * through it, once, with the request id; the app-level lines are in logging.test.ts.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { lazyRequestLogger } from '../../../src/http/observability/logging.js';

function countedLogger() {
  const lines: Record<string, unknown>[] = [];
  const parent = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  const made = { children: 0 };
  // Not bound: pino's children inherit this method, and a grandchild must be made from its own parent.
  const child = parent.child;
  parent.child = function countedChild(this: typeof parent, ...args: Parameters<typeof child>) {
    made.children++;
    return child.apply(this, args);
  } as typeof parent.child;
  return { parent, lines, made };
}

t.test('no child logger until something logs; then one, with the request id', async (t) => {
  const { parent, lines, made } = countedLogger();
  const log = lazyRequestLogger(parent, { reqId: 'request-1' }, {});
  t.equal(made.children, 0, 'a request that logs nothing costs no child');

  log.warn({ detail: 'slow' }, 'first');
  log.error('second %s', 'formatted');
  log.debug('below the level: not written');
  t.equal(made.children, 1, 'one child for every later line');
  t.equal(lines.length, 2);
  t.match(lines[0], { reqId: 'request-1', level: 40, detail: 'slow', msg: 'first' });
  t.match(lines[1], { reqId: 'request-1', level: 50, msg: 'second formatted' });
});

t.test('level and child pass through to the real child', async (t) => {
  const { parent, lines } = countedLogger();
  const log = lazyRequestLogger(parent, { reqId: 'request-2' }, {});
  t.equal(log.level, 'info');
  log.level = 'debug';
  log.debug('now written');
  log.child({ part: 'stream' }).info('from a grandchild');
  t.match(lines, [
    { reqId: 'request-2', level: 20, msg: 'now written' },
    { reqId: 'request-2', part: 'stream', msg: 'from a grandchild' },
  ]);
  t.equal(parent.level, 'info', 'the parent keeps its own level');
});

/**
 * gwapi bounds V8's heap itself (src/heap.ts), whatever starts it: a `gwapi serve` given no heap option
 * runs with SERVICE_NODE_OPTIONS, and an operator's own option is kept. Read in the running server
 * through its inspector (opened by NODE_OPTIONS, which names no heap flag): V8's heap limit, which is
 * the old generation plus three semi-spaces, so it shows both flags in effect, not only on the command
 * line.
 */
import t, { type Test } from 'tap';
import { freePort } from '../../src/db/embedded.js';
import { missingHeapOptions, SERVICE_NODE_OPTIONS } from '../../src/heap.js';
import { spawnReplica } from '../../testkit/gwapi.js';
import { evaluate, inspectFlag } from '../../testkit/inspector.js';
import { captureProcess, warningCaptureOptions } from '../../testkit/outputCapture.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';

const HEAP_LIMIT_MB = 'process.getBuiltinModule("v8").getHeapStatistics().heap_size_limit / 2 ** 20';
const sizeOf = (options: string[], flag: string) =>
  Number(options.find((option) => option.startsWith(`--${flag}=`))?.split('=')[1]);
/** V8's heap limit for these sizes (MB): the old generation and three semi-spaces. */
const heapLimitMb = (oldMb: number, semiMb: number) => oldMb + 3 * semiMb;

/** `gwapi serve` with `nodeOptions`: V8's heap limit, node's options and the pid, read inside it. */
async function serve(t: Test, db: TestDatabase, nodeOptions: string) {
  const port = await freePort();
  const replica = await spawnReplica(
    { DATABASE_URL: db.url, NODE_OPTIONS: `${nodeOptions} ${inspectFlag(port)}`.trim() },
    { owner: t, watch: captureProcess },
  );
  const [limitMb, execArgv, pid] = await Promise.all(
    [HEAP_LIMIT_MB, 'process.execArgv', 'process.pid'].map((expression) => evaluate(port, expression)),
  );
  await replica.stop();
  return { limitMb, execArgv: execArgv as string[], samePid: pid === replica.child.pid };
}

t.test('gwapi serve started without heap options runs with the service heap', async (t) => {
  const db = await freshDatabase(t);
  const { limitMb, execArgv, samePid } = await serve(t, db, '');
  const expected = heapLimitMb(
    sizeOf(SERVICE_NODE_OPTIONS, 'max-old-space-size'),
    sizeOf(SERVICE_NODE_OPTIONS, 'max-semi-space-size'),
  );
  t.equal(limitMb, expected, `V8's heap limit is ${expected} MB`);
  t.same(execArgv.slice(0, SERVICE_NODE_OPTIONS.length), SERVICE_NODE_OPTIONS, 'added to node options');
  t.ok(samePid, 'the same process (replaced by execve): signals reach the server');
});

t.test("an operator's own heap options are kept, and only the missing one added", async (t) => {
  const db = await freshDatabase(t);
  const oneGiven = await serve(t, db, '--max-semi-space-size=32');
  t.equal(oneGiven.limitMb, heapLimitMb(sizeOf(SERVICE_NODE_OPTIONS, 'max-old-space-size'), 32));
  const bothGiven = await serve(t, db, '--max-old-space-size=200 --max_semi_space_size=8');
  t.equal(bothGiven.limitMb, heapLimitMb(200, 8));
  t.same(
    bothGiven.execArgv,
    [...warningCaptureOptions(), '--import', 'tsx'],
    'nothing added to what testkit/gwapi.ts gave: the process was not replaced',
  );
});

t.test('which heap options are missing', async (t) => {
  t.same(missingHeapOptions([]), SERVICE_NODE_OPTIONS);
  t.same(missingHeapOptions(['--max-old-space-size=1024'], '--max_semi_space_size=8'), []);
  t.same(missingHeapOptions([], '  --inspect  --max-semi-space-size=64 '), ['--max-old-space-size=384']);
  // Quoted, as Node reads NODE_OPTIONS (tap's process hooks write it so).
  t.same(missingHeapOptions([], '"--max-semi-space-size=32" "--import=file:///a b.mjs"'), [
    '--max-old-space-size=384',
  ]);
  t.same(missingHeapOptions(['--import', 'tsx'], '--max-old-space-size-x=1'), SERVICE_NODE_OPTIONS);
});

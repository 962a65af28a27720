/**
 * The connection gate on its own: permits up to its size, first come first served, a wait that ends
 * at its deadline or when its client leaves, and a permit that counts once however often it is released.
 * A share of a gate (bulk documents): never more of the gate's places than its own, one deadline for
 * both waits, and every wait reported with its kind of request.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { loadSettings } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import {
  ConnectionGate,
  ConnectionWaitAborted,
  ConnectionWaitTimeout,
  type GateCounts,
  gateGroup,
  type Permit,
} from '../../src/db/connectionGate.js';
import { openReads } from '../../src/db/readReplicas/reads.js';
import { testDatabaseUrl } from '../helpers/database.js';

/** A gate whose every reported change is kept, to check that the reports match the counts. */
function recordedGate(size: number, waitMs: number) {
  const reports: GateCounts[] = [];
  const gate = new ConnectionGate({ size, waitMs, onChange: (counts) => reports.push(counts) });
  return { gate, reports };
}

/** Lets queued promise reactions run. */
const settled = () => sleep(0);

t.test('permits up to its size are given at once, the next waits', async (t) => {
  const { gate, reports } = recordedGate(2, 1000);
  const first = await gate.acquire();
  const second = await gate.acquire();
  t.same(gate.counts(), { held: 2, waiting: 0 });
  let third: Permit | undefined;
  void gate.acquire().then((permit) => (third = permit));
  await settled();
  t.same(gate.counts(), { held: 2, waiting: 1 });
  t.equal(third, undefined, 'waits while both permits are held');
  first.release();
  await settled();
  t.ok(third, 'gets the permit given back');
  t.same(gate.counts(), { held: 2, waiting: 0 }, 'handed over: still two held');
  second.release();
  third!.release();
  t.same(gate.counts(), { held: 0, waiting: 0 });
  t.same(reports.at(-1), { held: 0, waiting: 0 }, 'the last report is the current state');
});

t.test('waiters are served in the order they came', async (t) => {
  const { gate } = recordedGate(1, 1000);
  const holder = await gate.acquire();
  const order: number[] = [];
  const waiters = [1, 2, 3, 4].map((n) =>
    gate.acquire().then((permit) => {
      order.push(n);
      return permit;
    }),
  );
  await settled();
  t.equal(gate.counts().waiting, 4);
  holder.release();
  for (const waiter of waiters) (await waiter).release();
  t.same(order, [1, 2, 3, 4]);
  t.same(gate.counts(), { held: 0, waiting: 0 });
});

t.test('a newcomer does not overtake a waiter when a permit comes free', async (t) => {
  const { gate } = recordedGate(1, 1000);
  const holder = await gate.acquire();
  const order: string[] = [];
  const waiting = gate.acquire().then((permit) => {
    order.push('waiter');
    return permit;
  });
  holder.release();
  // The permit already belongs to the waiter: the newcomer must wait for it.
  const newcomer = gate.acquire().then((permit) => {
    order.push('newcomer');
    return permit;
  });
  (await waiting).release();
  (await newcomer).release();
  t.same(order, ['waiter', 'newcomer']);
});

t.test('a wait ends at its deadline with ConnectionWaitTimeout, not before', async (t) => {
  const { gate } = recordedGate(1, 300);
  const holder = await gate.acquire();
  const started = performance.now();
  const error = await gate.acquire().then(
    () => undefined,
    (e: unknown) => e,
  );
  const waited = performance.now() - started;
  t.ok(error instanceof ConnectionWaitTimeout, 'rejected with ConnectionWaitTimeout');
  const timeout = error as ConnectionWaitTimeout;
  t.equal(timeout.waitedMs, 300);
  t.same(timeout.counts, { held: 1, waiting: 1 }, 'the gate as it was when the wait ran out');
  t.ok(waited >= 295 && waited < 1000, `waited ${Math.round(waited)} ms`);
  t.same(gate.counts(), { held: 1, waiting: 0 }, 'the timed-out waiter left the queue');
  holder.release();
  t.same(gate.counts(), { held: 0, waiting: 0 }, 'the permit is not handed to the one that left');
});

t.test('an aborted wait leaves the queue at once and takes no permit', async (t) => {
  const { gate } = recordedGate(1, 10_000);
  const holder = await gate.acquire();
  const controller = new AbortController();
  const waiting = gate.acquire(controller.signal);
  const behind = gate.acquire();
  await sleep(20);
  t.same(gate.counts(), { held: 1, waiting: 2 });
  const started = performance.now();
  controller.abort();
  const error = await waiting.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof ConnectionWaitAborted, 'rejected with ConnectionWaitAborted');
  t.ok(performance.now() - started < 50, 'at once, not at the deadline');
  t.ok((error as ConnectionWaitAborted).waitedMs >= 15, 'says how long it had waited');
  t.same(gate.counts(), { held: 1, waiting: 1 });
  holder.release();
  const next = await behind;
  t.same(gate.counts(), { held: 1, waiting: 0 }, 'the permit went to the one behind');
  next.release();
  t.same(gate.counts(), { held: 0, waiting: 0 });
});

t.test('an already aborted signal is refused without waiting, even with a permit free', async (t) => {
  const { gate } = recordedGate(1, 10_000);
  const error = await gate.acquire(AbortSignal.abort()).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof ConnectionWaitAborted);
  t.same(gate.counts(), { held: 0, waiting: 0 });
});

t.test('an abort after the permit was given changes nothing', async (t) => {
  const { gate } = recordedGate(1, 10_000);
  const controller = new AbortController();
  const permit = await gate.acquire(controller.signal);
  controller.abort();
  t.same(gate.counts(), { held: 1, waiting: 0 }, 'still held: only release gives it back');
  permit.release();
  t.same(gate.counts(), { held: 0, waiting: 0 });
});

t.test('a permit released twice counts once', async (t) => {
  const { gate } = recordedGate(2, 1000);
  const first = await gate.acquire();
  const second = await gate.acquire();
  first.release();
  first.release();
  t.same(gate.counts(), { held: 1, waiting: 0 }, 'the second release did not free the other permit');
  const third = await gate.acquire();
  t.same(gate.counts(), { held: 2, waiting: 0 });
  let fourth: Permit | undefined;
  void gate.acquire().then((permit) => (fourth = permit));
  first.release();
  await settled();
  t.equal(fourth, undefined, 'a stale release hands nothing to a waiter');
  second.release();
  await settled();
  t.ok(fourth);
  third.release();
  fourth!.release();
  t.same(gate.counts(), { held: 0, waiting: 0 });
});

t.test('run gives the permit back however the work ends', async (t) => {
  const { gate } = recordedGate(1, 1000);
  t.equal(await gate.run(async () => 42), 42);
  t.same(gate.counts(), { held: 0, waiting: 0 });
  await t.rejects(
    gate.run(async () => {
      throw new Error('query failed');
    }),
    { message: 'query failed' },
  );
  t.same(gate.counts(), { held: 0, waiting: 0 }, 'released after a failure too');
  const holder = await gate.acquire();
  let ran = false;
  await t.rejects(
    gate.run(async () => {
      ran = true;
    }, AbortSignal.timeout(20)),
    ConnectionWaitAborted,
  );
  t.notOk(ran, 'work that never got a permit never runs');
  holder.release();
  t.same(gate.counts(), { held: 0, waiting: 0 });
});

t.test('refuses a size or wait that would make it useless', async (t) => {
  t.throws(() => new ConnectionGate({ size: 0, waitMs: 1000 }), RangeError);
  t.throws(() => new ConnectionGate({ size: 1.5, waitMs: 1000 }), RangeError);
  t.throws(() => new ConnectionGate({ size: 1, waitMs: 0 }), RangeError);
  t.throws(() => new ConnectionGate({ size: 1, waitMs: Number.NaN }), RangeError);
});

t.test('one gate per pool, reported together; key lookups share the reads’ gate', async (t) => {
  const reports: GateCounts[] = [];
  const newGate = gateGroup({ size: 2, waitMs: 500 }, (counts) => reports.push(counts));
  const [reads, keys] = [newGate(), newGate()];
  t.equal(reads.size, 2);
  t.equal(reads.waitMs, 500);
  const held = [await reads.acquire(), await reads.acquire()];
  const key = await keys.acquire();
  t.same(reports.at(-1), { held: 3, waiting: 0 }, 'the gauge shows both pools');
  t.same(keys.counts(), { held: 1, waiting: 0 }, 'a full reads pool leaves another pool’s gate free');
  for (const permit of [...held, key]) permit.release();
  t.same(reports.at(-1), { held: 0, waiting: 0 });

  const settings = loadSettings({ DATABASE_POOL_MAX: '3', DATABASE_WAIT_SECONDS: '0.25' });
  const sql = connect(testDatabaseUrl(), { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const { primary, sources } = openReads({ settings, primary: sql });
  t.same(sources, [primary], 'without replicas every read is on the primary');
  t.same(
    [primary.sql, primary.gate.size, primary.gate.waitMs],
    [sql, 3, 250],
    'its gate as large as its pool',
  );
  t.same(
    [primary.bulkGate.within, primary.bulkGate.size],
    [primary.gate, 1],
    'its bulk gate a share of it: a fifth of the pool by default, rounded down, at least 1',
  );
  const set = openReads({ settings: { ...settings, BULK_CONNECTIONS: 3 }, primary: sql });
  t.equal(set.primary.bulkGate.size, 3, 'BULK_CONNECTIONS sets the share');
});

t.test('a share holds its places within its gate, and leaves the rest to other requests', async (t) => {
  const waits: [string, number][] = [];
  const reports: GateCounts[] = [];
  const newGate = gateGroup(
    { size: 3, waitMs: 300, onWaited: (kind, waitedMs) => waits.push([kind, waitedMs]) },
    (counts) => reports.push(counts),
  );
  const gate = newGate();
  const bulk = newGate({ of: gate, size: 2 });
  const bulkHeld = [await bulk.acquire(undefined, 'network'), await bulk.acquire(undefined, 'network')];
  t.same(gate.counts(), { held: 2, waiting: 0 }, 'each bulk permit holds one of the gate');
  t.same(reports.at(-1), { held: 2, waiting: 0 }, 'held once in the report, not once per gate');

  const started = performance.now();
  const third = bulk.acquire(undefined, 'network').then(
    () => undefined,
    (e: unknown) => e,
  );
  await settled();
  t.same(bulk.counts(), { held: 2, waiting: 1 }, 'a third bulk request waits at its share');
  t.same(reports.at(-1), { held: 2, waiting: 1 }, 'and is reported waiting');
  const series = await gate.acquire(undefined, 'series');
  t.same(gate.counts(), { held: 3, waiting: 0 }, 'while a short request takes the place left');
  t.ok(performance.now() - started < 100, 'at once');
  const timeout = await third;
  t.ok(timeout instanceof ConnectionWaitTimeout, 'the bulk request is refused at its deadline');
  series.release();

  // A share's place, then the gate's: one deadline for both.
  bulkHeld[0]!.release();
  const shortHeld = [await gate.acquire(), await gate.acquire()];
  const sinceBoth = performance.now();
  const blocked = await bulk.acquire(undefined, 'network').then(
    () => undefined,
    (e: unknown) => e,
  );
  const waitedBoth = performance.now() - sinceBoth;
  t.ok(blocked instanceof ConnectionWaitTimeout, 'a share’s place but none of the gate’s: refused');
  t.ok(waitedBoth >= 295 && waitedBoth < 600, `after one wait in all (${Math.round(waitedBoth)} ms)`);
  t.same(bulk.counts(), { held: 1, waiting: 0 }, 'its share place given back');
  for (const permit of [...shortHeld, bulkHeld[1]!]) permit.release();
  t.same(
    [gate.counts(), bulk.counts()],
    [
      { held: 0, waiting: 0 },
      { held: 0, waiting: 0 },
    ],
  );

  const bulkPermit = await bulk.acquire();
  bulkPermit.release();
  bulkPermit.release();
  t.same(
    [gate.counts(), bulk.counts()],
    [
      { held: 0, waiting: 0 },
      { held: 0, waiting: 0 },
    ],
    'once',
  );

  t.same(
    waits.map(([kind]) => kind),
    ['network', 'network', 'series', 'network', 'other', 'other', 'network', 'other'],
    'every wait reported when it ends, with its kind (other when not told)',
  );
  t.ok(waits[3]![1] >= 295, 'the refused wait reported as long as it was');
  t.ok(waits[0]![1] < 50, 'a permit given at once is a wait of nothing');
  t.throws(() => newGate({ of: gate, size: 4 }), RangeError, 'a share larger than its gate');
});

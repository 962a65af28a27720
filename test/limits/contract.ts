/**
 * What the limits promise, whichever store keeps them. memory.test.ts runs it on the in-process store
 * with a stepped clock (exact), redis.test.ts on a real Redis in real time (margins noted per test).
 */
import type { Test } from 'tap';
import type { StoreClientLimits } from '../../src/limits/clientLimits.js';
import type { LimitStore } from '../../src/limits/store.js';
import { sleep, unique } from '../helpers/limits.js';

export interface LimitsHarness {
  /**
   * Limits with `env` on top of the default settings, and a store on the same state that takes slots
   * and never renews them: what a replica killed mid-response leaves behind.
   */
  open(
    t: Test,
    env?: Record<string, string>,
  ): Promise<{ limits: StoreClientLimits; deadReplica: LimitStore }>;
  /** Lets `ms` pass on the limits' clock. */
  advance(ms: number): Promise<void>;
}

export function limitsContract(t: Test, harness: LimitsHarness): void {
  t.test('at the real numbers: 60 pass, the 61st waits 2 s, then exactly one more passes', async (t) => {
    const { limits } = await harness.open(t);
    t.same(limits.policy, { quota: 60, windowSeconds: 120 });
    const key = unique('key_');
    const started = performance.now();
    for (let request = 1; request <= 60; request++) {
      const admission = await limits.admit(key);
      if (!admission.admitted) return t.fail(`request ${request} was refused (${admission.reason})`);
      if (request === 1) t.same(admission.rate, { limit: 60, remaining: 59, resetSeconds: 2 });
      // The next token is 2 s away whatever the level: the window in which `remaining` is all there is.
      if (request === 60) t.same(admission.rate, { limit: 60, remaining: 0, resetSeconds: 2 });
      await admission.release();
    }
    // Retry-After 2 holds only if the burst took under a second of the 2 s a token takes.
    t.ok(performance.now() - started < 1000, 'the burst of 60 took under a second');
    t.same(await limits.admit(key), { admitted: false, reason: 'rate', retryAfterSeconds: 2 });

    await harness.advance(2000);
    const next = await limits.admit(key);
    t.equal(next.admitted, true, 'one token came back after Retry-After');
    if (next.admitted) await next.release();
    // The token after that is 2 s away: only a stall of almost 2 s in this test could let it pass.
    t.match(await limits.admit(key), { admitted: false, reason: 'rate' });
  });

  t.test('a third request in flight is refused at once; release frees one slot, once', async (t) => {
    const { limits } = await harness.open(t);
    const key = unique('key_');
    const first = await limits.admit(key);
    const second = await limits.admit(key);
    t.ok(first.admitted && second.admitted, 'two requests in flight');
    t.same(await limits.admit(key), { admitted: false, reason: 'concurrency', retryAfterSeconds: 1 });
    if (!first.admitted) return;
    await first.release();
    await first.release();
    const third = await limits.admit(key);
    t.equal(third.admitted, true, 'the released slot is taken again');
    t.match(
      await limits.admit(key),
      { admitted: false, reason: 'concurrency' },
      'a double release freed one',
    );
    t.equal((await limits.admit(unique('key_'))).admitted, true, 'another key has slots of its own');
  });

  t.test('slots of a replica that stopped renewing come back after the lease', async (t) => {
    const { limits, deadReplica } = await harness.open(t, { CONCURRENCY_LEASE_SECONDS: '1.5' });
    const key = unique('key_');
    t.match(await deadReplica.admit(key, 'dead-1'), { kind: 'admitted' });
    t.match(await deadReplica.admit(key, 'dead-2'), { kind: 'admitted' });
    t.match(await limits.admit(key), { admitted: false, reason: 'concurrency' }, 'both slots held');
    await harness.advance(1800);
    t.equal((await limits.admit(key)).admitted, true, 'a slot is free once the lease ran out');
  });

  t.test('a renewal takes back a slot that expired while its response still runs', async (t) => {
    const { limits, deadReplica } = await harness.open(t, {
      CONCURRENCY_LIMIT: '1',
      CONCURRENCY_LEASE_SECONDS: '1.5',
    });
    const key = unique('key_');
    const late = await deadReplica.admit(key, 'late');
    if (late.kind !== 'admitted') return t.fail(`not admitted: ${late.kind}`);
    await harness.advance(1800);
    await late.slot.renew();
    t.match(await limits.admit(key), { admitted: false, reason: 'concurrency' }, 'the renewed slot counts');
    await late.slot.release();
    t.equal((await limits.admit(key)).admitted, true);
  });

  t.test('failed auth is limited per address, apart from keys', async (t) => {
    const { limits } = await harness.open(t, { FAILED_AUTH_LIMIT: '3', FAILED_AUTH_WINDOW_SECONDS: '1' });
    const address = '198.51.100.7';
    const network = '2001:db8:7:1';
    for (let failure = 1; failure <= 3; failure++) {
      t.same(await limits.admitFailedAuth(address), { admitted: true }, `failure ${failure} is answered`);
      t.same(await limits.admitFailedAuth(`${network}::${failure}`), { admitted: true });
    }
    t.same(await limits.admitFailedAuth(address), { admitted: false, retryAfterSeconds: 1 });
    t.same(await limits.admitFailedAuth(`::ffff:${address}`), { admitted: false, retryAfterSeconds: 1 });
    t.match(
      await limits.admitFailedAuth(`${network}::abcd`),
      { admitted: false },
      'the whole IPv6 /64 counts as one client',
    );
    t.same(
      await limits.admitFailedAuth('2001:db8:7:2::1'),
      { admitted: true },
      'the next /64 is another client',
    );
    t.equal((await limits.admit(unique('key_'))).admitted, true, 'a valid key is never slowed');
    // The failed-auth window runs on the real clock in both stores.
    await sleep(1100);
    t.same(await limits.admitFailedAuth(address), { admitted: true }, 'the next window allows again');
  });
}

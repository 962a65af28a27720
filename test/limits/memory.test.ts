/** The in-process limits (no REDIS_URL, and every replica's fallback) on a stepped clock. */
import t from 'tap';
import { StoreClientLimits } from '../../src/limits/clientLimits.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { MemoryLimitStore } from '../../src/limits/memoryStore.js';
import { limitParameters } from '../../src/limits/parameters.js';
import { recordingLogger, settingsWith } from '../helpers/limits.js';
import { limitsContract } from './contract.js';

let now = 1_000_000;
const clock = () => now;

limitsContract(t, {
  async open(t, env) {
    const parameters = limitParameters(settingsWith(env));
    const store = new MemoryLimitStore(parameters, clock);
    const limits = new StoreClientLimits(store, parameters);
    t.teardown(() => limits.close());
    return { limits, deadReplica: store };
  },
  async advance(ms) {
    now += ms;
  },
});

t.test('without REDIS_URL the factory limits in process, quietly', async (t) => {
  const logger = recordingLogger();
  const limits = await createClientLimits(settingsWith({ RATE_LIMIT_BURST: '1' }), { logger, clock });
  t.teardown(() => limits.close());
  t.equal((await limits.admit('key_a')).admitted, true);
  t.match(await limits.admit('key_a'), { admitted: false, reason: 'rate' });
  t.same(logger.lines, []);
});

t.test('Retry-After counts down to the next token in whole seconds, never below 1', async (t) => {
  const parameters = limitParameters(settingsWith({ RATE_LIMIT_BURST: '1', RATE_LIMIT_PER_SECOND: '0.25' }));
  const limits = new StoreClientLimits(new MemoryLimitStore(parameters, clock), parameters);
  t.teardown(() => limits.close());
  const take = async () => {
    const admission = await limits.admit('key_countdown');
    if (admission.admitted) await admission.release();
    return admission.admitted ? 'admitted' : admission.retryAfterSeconds;
  };
  t.equal(await take(), 'admitted');
  t.equal(await take(), 4);
  now += 1;
  t.equal(await take(), 4, '3.999 s is 4');
  now += 2999;
  t.equal(await take(), 1, 'exactly 1 s is 1');
  now += 999;
  t.equal(await take(), 1, '1 ms is 1, not 0');
  now += 1;
  t.equal(await take(), 'admitted');
});

t.test('an idle bucket fills up to the burst and no further', async (t) => {
  const parameters = limitParameters(settingsWith({ RATE_LIMIT_BURST: '3', CONCURRENCY_LIMIT: '10' }));
  const store = new MemoryLimitStore(parameters, clock);
  const admitted = async () => (await store.admit('key_idle', String(Math.random()))).kind === 'admitted';
  for (let i = 0; i < 3; i++) t.ok(await admitted());
  t.notOk(await admitted());
  now += 3_600_000;
  for (let i = 0; i < 3; i++) t.ok(await admitted(), `token ${i + 1} of 3 after an hour`);
  t.notOk(await admitted(), 'an hour of idling saves no more than the burst');
});

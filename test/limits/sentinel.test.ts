/**
 * Limits through Redis Sentinel (REDIS_SENTINELS), on real servers: a master, a replica of it and a
 * Sentinel watching them. Two limiter instances stand for two replicas of the service; they find the
 * master through the Sentinel, share its buckets, and follow a failover to the promoted replica.
 */
import { Redis } from 'ioredis';
import t from 'tap';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { startRedis, startSentinel } from '../../testkit/redis.js';
import { recordingLogger, settingsWith, sleep, unique } from '../helpers/limits.js';

const NAME = 'gwapi-limits';

t.test('limits find the master through Sentinel and follow a failover', async (t) => {
  const master = await startRedis();
  t.teardown(master.stop);
  const replica = await startRedis(undefined, ['--replicaof', '127.0.0.1', String(master.port)]);
  t.teardown(replica.stop);
  const sentinel = await startSentinel(master.port, NAME);
  t.teardown(sentinel.stop);

  const keyPrefix = `${unique('gwapi-test:')}:`;
  const settings = settingsWith({
    REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`,
    REDIS_SENTINEL_NAME: NAME,
    // Where the master is comes from the Sentinel: the URL's host and port (nothing listens there) are not used.
    REDIS_URL: 'redis://127.0.0.1:1/0',
  });
  const open = async () => {
    const limits = await createClientLimits(settings, { logger: recordingLogger(), keyPrefix });
    t.teardown(() => limits.close());
    return limits;
  };
  const [a, b] = [await open(), await open()];
  t.equal(a.state?.(), 'shared', 'connected through the Sentinel');

  const key = unique('key_');
  for (let request = 0; request < 30; request++) {
    const admission = await (request % 2 === 0 ? a : b).admit(key);
    if (!admission.admitted) return t.fail(`request ${request + 1} was refused`);
    await admission.release();
  }
  t.match(await b.admit(key), { admitted: true }, 'the burst is shared: 30 spent of 30 + 30');
  const onMaster = new Redis(master.url);
  t.ok((await onMaster.keys(`${keyPrefix}*`)).length > 0, "the buckets are in the master's keys");
  onMaster.disconnect();

  // The master dies; the Sentinel promotes the replica; both limiters reconnect to it.
  master.process.kill('SIGKILL');
  const promoted = new Redis(replica.url);
  t.teardown(() => promoted.disconnect());
  const deadline = performance.now() + 20_000;
  let role = '';
  while (performance.now() < deadline) {
    role = String(((await promoted.role()) as unknown[])[0]);
    if (role === 'master' && a.state?.() === 'shared' && b.state?.() === 'shared') break;
    await sleep(200);
  }
  t.equal(role, 'master', 'the Sentinel promoted the replica');
  t.equal(a.state?.(), 'shared', 'a shares limits again, through the new master');
  t.equal(b.state?.(), 'shared', 'b too');

  const after = unique('key_');
  const first = await a.admit(after);
  const second = await b.admit(after);
  t.ok(first.admitted && second.admitted, 'one request in flight on each');
  t.match(await a.admit(after), { admitted: false, reason: 'concurrency' }, 'slots shared on the new master');
  t.ok(
    (await promoted.keys(`${keyPrefix}*`)).length > 0,
    "the new buckets are in the promoted replica's keys",
  );
  if (first.admitted) await first.release();
  if (second.admitted) await second.release();
});

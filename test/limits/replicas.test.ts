/**
 * Limits as the clients of a deployment meet them: several `gwapi serve` processes on their own ports,
 * one database, one Redis (this file's own, so it can be stopped), real HTTP. Each group of tests runs
 * its replicas with the settings it needs; every test uses keys of its own.
 *
 * Timing: the machine is shared, so waits are chosen to hold under a stall of most of a second, and
 * every bound still fails if the logic is wrong (each is explained where it is made).
 */
import t, { type Test } from 'tap';
import { generateApiKey } from '../../src/keys/format.js';
import { createKey } from '../../src/keys/store.js';
import { addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { INFO, logged, type Replica, WARN } from '../../testkit/gwapi.js';
import { type OpenStream, openStream } from '../../testkit/openStream.js';
import { type RedisServer, startRedis } from '../../testkit/redis.js';
import { freshDatabase } from '../helpers/database.js';
import { get, type HttpResponse } from '../helpers/http.js';
import { sleep, unique } from '../helpers/limits.js';
import { startReplica } from '../helpers/serve.js';

const WELLS = '/v1/groundwater-monitoring-wells';
const OPENAPI = '/v1/openapi.json';
/** Its 3.0 rendering, the OGC service-desc. */
const OPENAPI_30 = '/v1/ogc/api';

const db = await freshDatabase(t);
const [tube] = await addWell(db.sql, 'Well', [{ number: '1' }]);
// Three months of 1-minute data, about 7 MB of JSON: far more than the socket buffers hold, so a
// client that stops reading keeps its response (and its slot) open as long as it likes.
await addRegularSeries(db.sql, tube!.id, '2024-01-01T00:00:00Z', '2024-04-01T00:00:00Z', '1 minute');
const LONG = `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements?from=2024-01-01T00:00:00Z&to=2024-04-01T00:00:00Z`;
const redis = await startRedis();
t.teardown(() => redis.stop());

async function newKey(): Promise<string> {
  const created = await createKey(db.sql, {
    name: unique('replicas '),
    tubeIdentifiers: [tube!.identifier],
    allTubes: false,
  });
  return created.key;
}

function replicas(t: Test, count: number, env: Record<string, string>, redisUrl = redis.url) {
  return Promise.all(
    Array.from({ length: count }, () =>
      startReplica(t, { DATABASE_URL: db.url, REDIS_URL: redisUrl, ...env }),
    ),
  );
}

const discovery = (replica: Replica, key: string, headers: Record<string, string> = {}) =>
  get(replica.base, WELLS, { 'x-api-key': key, ...headers });

function tooManyRequests(t: Test, response: HttpResponse, retryAfter: RegExp, message: string) {
  t.equal(response.status, 429, message);
  t.match(response.headers['retry-after'], retryAfter, `${message}: Retry-After`);
  t.equal(response.headers['content-type'], 'application/problem+json');
  t.match(JSON.parse(response.body), { status: 429, title: 'Too Many Requests', instance: WELLS });
}

/** A slow reader: the series has begun and the client reads no more of it. Throws when refused. */
async function slowStream(replica: Replica, key: string): Promise<OpenStream & { ended(): boolean }> {
  const stream = openStream(replica.base, LONG, key);
  let ended = false;
  void stream.done.then(() => (ended = true));
  const first = (await stream.firstChunk).toString();
  if (!first.startsWith('{"tubeIdentifier"')) throw new Error(`no series but ${first}`);
  stream.pause();
  return { ...stream, ended: () => ended };
}

/** `attempt` until it resolves, every 50 ms for `timeoutMs`; then its last error. */
async function retrying<T>(attempt: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

/** Sends `request` every `everyMs` until it answers 200 or `timeoutMs` passed; the time it took, or null. */
async function msUntilAdmitted(request: () => Promise<HttpResponse>, timeoutMs: number, everyMs = 50) {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if ((await request()).status === 200) return performance.now() - started;
    await sleep(everyMs);
  }
  return null;
}

t.test(
  'at the contract numbers (60 burst, 0.5/s, 2 in flight), two replicas share every limit',
  async (t) => {
    // B is behind one proxy hop, as in docker-compose.yml; A trusts no proxy header.
    const [a, b] = await Promise.all([
      startReplica(t, { DATABASE_URL: db.url, REDIS_URL: redis.url }),
      startReplica(t, { DATABASE_URL: db.url, REDIS_URL: redis.url, TRUST_PROXY: '1' }),
    ]);
    if (!a || !b) throw new Error('no replicas');

    t.test(
      '30 requests on each replica empty the bucket; then both refuse; 2 s later one more passes',
      async (t) => {
        const key = await newKey();
        const started = performance.now();
        const first = await discovery(a, key);
        t.equal(first.status, 200);
        t.equal(
          first.headers['ratelimit-policy'],
          '"default";q=60;w=120',
          'the bucket: 60, full again after 120 s',
        );
        t.equal(first.headers.ratelimit, '"default";r=59;t=2', '59 left, full again 2 s later');
        let last = first;
        for (let request = 2; request <= 60; request++) {
          last = await discovery(request <= 30 ? a : b, key);
          if (last.status !== 200) return t.fail(`request ${request} was ${last.status}`);
        }
        t.pass('60 requests passed, 30 on each replica');
        // The effective window of the draft: none left until the next token, at most 2 s away.
        t.match(last.headers.ratelimit, /^"default";r=0;t=[12]$/, 'the 60th: none left for up to 2 s');

        // Requests until one is refused, alternating replicas. None may pass unless the burst took 2 s or
        // more, in which case one token per 2 s came back: bounded by the time measured, never looser.
        // Limits kept per replica would let 30 more pass on each.
        let extra = 0;
        let refused: HttpResponse | undefined;
        while (!refused && extra <= 30) {
          const response = await discovery(extra % 2 === 0 ? a : b, key);
          if (response.status === 200) extra++;
          else refused = response;
        }
        const tokensRefilled = Math.floor((performance.now() - started) / 2000);
        t.ok(
          extra <= tokensRefilled,
          `${extra} passed after the 60 (tokens refilled meanwhile: ${tokensRefilled})`,
        );
        if (!refused) return;
        // The next token is at most 2 s away; Retry-After rounds it up to whole seconds.
        tooManyRequests(t, refused, /^[12]$/, 'the bucket is empty');
        const other = await discovery(extra % 2 === 0 ? b : a, key);
        tooManyRequests(t, other, /^[12]$/, 'the other replica refuses too');

        // Waiting Retry-After brings exactly one token: the one after it is 2 s later, at least 1 s after
        // this request (Retry-After overstates the wait by under a second).
        await sleep(Number(refused.headers['retry-after']) * 1000 + 50);
        const oneMore = await discovery(b, key);
        t.equal(oneMore.status, 200, 'one more after Retry-After');
        t.match(oneMore.headers.ratelimit, /^"default";r=0;t=[12]$/, 'and none left');
        tooManyRequests(t, await discovery(a, key), /^[12]$/, 'exactly one');
      },
    );

    t.test('both OpenAPI renderings and the health checks: not counted, no RateLimit fields', async (t) => {
      const key = await newKey();
      for (const path of [OPENAPI, OPENAPI_30, '/health/live', '/health/ready', OPENAPI, OPENAPI_30]) {
        for (const replica of [a, b]) {
          const response = await get(replica.base, path, { 'x-api-key': key });
          t.equal(response.status, 200, path);
          t.equal(response.headers.ratelimit, undefined);
          t.equal(response.headers['ratelimit-policy'], undefined);
        }
      }
      t.equal((await discovery(b, key)).headers.ratelimit, '"default";r=59;t=2', 'the first counted request');
    });

    t.test('two slow streams, one per replica: a third request on either is refused at once', async (t) => {
      const key = await newKey();
      const onA = await slowStream(a, key);
      const onB = await slowStream(b, key);
      tooManyRequests(t, await discovery(a, key), /^1$/, 'third request on A');
      tooManyRequests(t, await discovery(b, key), /^1$/, 'third request on B');
      t.ok(!onA.ended() && !onB.ended(), 'both streams were still running');

      // Released at once when the client leaves: well before the 10 s lease could free it, and a slot
      // that is never released would be renewed for ever.
      onA.abort();
      const ms = await msUntilAdmitted(() => discovery(b, key), 3000);
      t.ok(ms !== null, `the slot of the client that left was free after ${Math.round(ms ?? -1)} ms`);
      // One slot came back, not both: a new slow stream takes it and a third request is refused again.
      // The request that found the slot free holds it until its own response has closed: retried.
      const again = await retrying(() => slowStream(a, key), 3000);
      tooManyRequests(t, await discovery(b, key), /^1$/, 'both slots in use again');
      again.abort();
      onB.resume();
      t.ok((await onB.done).complete, 'the slow stream on B completes');
    });

    t.test('failed auth is limited per client address, shared by the replicas', async (t) => {
      // A trusts no proxy: whatever X-Forwarded-For says, every request here comes from 127.0.0.1.
      for (let attempt = 1; attempt <= 10; attempt++) {
        const headers = { 'x-forwarded-for': `198.51.100.${attempt}` };
        const response =
          attempt % 2 === 0
            ? await discovery(a, generateApiKey(), headers)
            : await get(a.base, WELLS, headers);
        if (response.status !== 401) return t.fail(`attempt ${attempt} was ${response.status}`);
      }
      t.pass('10 requests with a missing or unknown key: 401');
      const guess = await discovery(a, generateApiKey(), { 'x-forwarded-for': '198.51.100.99' });
      tooManyRequests(t, guess, /^\d+$/, 'the 11th from the same address, whatever it claims');
      t.ok(Number(guess.headers['retry-after']) <= 60, 'until the 60 s window ends');
      tooManyRequests(t, await get(b.base, WELLS), /^\d+$/, 'the same address on the other replica');
      const key = await newKey();
      t.equal((await discovery(a, key)).status, 200, 'a valid key from that address is not slowed');

      // B is behind one trusted hop: the address is the last X-Forwarded-For entry.
      const attacker = { 'x-forwarded-for': '203.0.113.7' };
      for (let attempt = 1; attempt <= 10; attempt++) {
        const response = await discovery(b, generateApiKey(), attacker);
        if (response.status !== 401)
          return t.fail(`attempt ${attempt} from 203.0.113.7 was ${response.status}`);
      }
      tooManyRequests(t, await discovery(b, generateApiKey(), attacker), /^\d+$/, '203.0.113.7 is limited');
      const spoofed = { 'x-forwarded-for': '192.0.2.1, 203.0.113.7' };
      tooManyRequests(
        t,
        await discovery(b, generateApiKey(), spoofed),
        /^\d+$/,
        'an entry it added itself is not believed',
      );
      t.equal(
        (await discovery(b, generateApiKey(), { 'x-forwarded-for': '203.0.113.8' })).status,
        401,
        'another address is not',
      );
      t.equal(
        (await discovery(b, key, attacker)).status,
        200,
        'a valid key from the limited address is served',
      );
    });
  },
);

t.test(
  'a slot is leased: renewed while its response runs, back within the lease when its replica is killed',
  async (t) => {
    const LEASE_SECONDS = 3;
    const [c, d] = await replicas(t, 2, { CONCURRENCY_LEASE_SECONDS: String(LEASE_SECONDS) });
    if (!c || !d) throw new Error('no replicas');
    const key = await newKey();
    const streams = [await slowStream(c, key), await slowStream(c, key)];
    tooManyRequests(t, await discovery(d, key), /^1$/, 'both slots are held by C');

    // Twice the lease: the slots stay only because C renews them (every second; a stall of up to 2 s
    // between renewals is covered).
    await sleep(2 * LEASE_SECONDS * 1000 + 500);
    tooManyRequests(t, await discovery(d, key), /^1$/, 'still held after twice the lease');
    t.ok(
      streams.every((stream) => !stream.ended()),
      'the streams were still running',
    );

    await c.stop('SIGKILL');
    const killedAt = performance.now();
    tooManyRequests(
      t,
      await discovery(d, key),
      /^1$/,
      'a killed replica releases nothing: its slots are leased',
    );
    // C renewed at most 1 s before it died, so its leases end at most 3 s after; 1.5 s of margin.
    const ms = await msUntilAdmitted(() => discovery(d, key), LEASE_SECONDS * 1000 + 1500, 100);
    t.ok(
      ms !== null,
      `a slot came back ${((performance.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
    for (const stream of streams) {
      // A client that reads nothing cannot notice that the connection is gone.
      stream.resume();
      t.notOk((await stream.done).complete, 'the stream of the killed replica was cut');
    }
  },
);

t.test(
  'Redis stopped and restarted under load: no 500, limits per replica meanwhile, shared again after',
  async (t) => {
    const own: { server: RedisServer } = { server: await startRedis() };
    t.teardown(() => own.server.stop());
    // Ten requests per key and no refill to speak of during the test (one token per 100 s).
    const [e, f] = await replicas(
      t,
      2,
      { RATE_LIMIT_BURST: '10', RATE_LIMIT_PER_SECOND: '0.01' },
      own.server.url,
    );
    if (!e || !f) throw new Error('no replicas');

    /** 5 requests on each replica pass, then both refuse: one bucket of 10 for both. */
    async function sharedBucket(t: Test, message: string) {
      const key = await newKey();
      for (let request = 1; request <= 10; request++) {
        const response = await discovery(request <= 5 ? e! : f!, key);
        if (response.status !== 200) return t.fail(`${message}: request ${request} was ${response.status}`);
      }
      t.equal((await discovery(e!, key)).status, 429, `${message}: the 11th is refused on E`);
      t.equal((await discovery(f!, key)).status, 429, `${message}: and on F`);
    }
    await sharedBucket(t, 'before');

    // Load on both replicas all along, one key's requests (200 until its bucket is empty, then 429),
    // the answers kept per phase: Redis up, down, back.
    let phase: 'up' | 'down' | 'back' = 'up';
    const answers = {
      up: [] as (number | string)[],
      down: [] as (number | string)[],
      back: [] as (number | string)[],
    };
    let slowestMs = 0;
    let running = true;
    const load = (async () => {
      const key = await newKey();
      for (let request = 0; running; request++) {
        const started = performance.now();
        const during = phase;
        const status = await discovery(request % 2 === 0 ? e : f, key).then(
          (response) => response.status,
          (error: Error) => error.message,
        );
        slowestMs = Math.max(slowestMs, performance.now() - started);
        answers[during].push(status);
        await sleep(20);
      }
    })();
    const unavailable = /^limits: Redis is unavailable/;
    const back = /^limits: Redis answers again/;
    const bothLogged = async (pattern: RegExp) => {
      const deadline = performance.now() + 10_000;
      while (performance.now() < deadline) {
        if (logged(e, pattern).length > 0 && logged(f, pattern).length > 0) return true;
        await sleep(50);
      }
      return false;
    };

    await sleep(300);
    await own.server.stop();
    phase = 'down';
    t.ok(await bothLogged(unavailable), 'both replicas said they limit on their own');
    // Still ready: taking every replica out of the load balancer would turn this into an outage.
    t.match(JSON.parse((await get(e.base, '/health/ready')).body), {
      status: 'warn',
      checks: { redis: { status: 'warn' } },
    });
    const key = await newKey();
    for (const replica of [e, f]) {
      const answers: number[] = [];
      for (let request = 1; request <= 11; request++) answers.push((await discovery(replica, key)).status);
      t.same(answers, [...Array(10).fill(200), 429], 'each replica has a bucket of 10 of its own meanwhile');
    }

    // A second more of load on the two replicas limiting on their own.
    await sleep(1000);
    own.server = await startRedis(own.server.port);
    phase = 'back';
    t.ok(await bothLogged(back), 'both replicas said limits are shared again');
    t.match(JSON.parse((await get(f.base, '/health/ready')).body), { checks: { redis: { status: 'pass' } } });
    await sharedBucket(t, 'after Redis returned');
    await sleep(500);
    running = false;
    await load;

    for (const [during, statuses] of Object.entries(answers)) {
      const unexpected = statuses.filter((status) => status !== 200 && status !== 429);
      t.same(unexpected, [], `Redis ${during}: ${statuses.length} requests, each 200 or 429`);
      t.ok(statuses.length >= 5, `Redis ${during}: the load kept being served`);
    }
    // The request that meets the dead Redis first fails fast (no offline queue, 500 ms command timeout).
    t.ok(slowestMs < 1500, `no request waited on Redis (slowest ${Math.round(slowestMs)} ms)`);
    for (const replica of [e, f]) {
      const switches = logged(replica, /^limits: Redis/).map((line) => line.level);
      t.same(switches, [WARN, INFO], 'each switch logged once per replica');
    }
  },
);

t.test('without REDIS_URL the same limits run in process, and the service says so once', async (t) => {
  const [alone, lifted] = await Promise.all([
    startReplica(t, { DATABASE_URL: db.url, RATE_LIMIT_BURST: '3' }),
    startReplica(t, { DATABASE_URL: db.url, REDIS_URL: redis.url, LIMITS_ENABLED: 'false' }),
  ]);
  t.same(
    logged(alone, /REDIS_URL/).map((line) => [line.level, line.msg]),
    [[WARN, 'REDIS_URL is not set: limits are kept in this process, which is correct for one replica only']],
  );
  const key = await newKey();
  const answers: number[] = [];
  for (let request = 1; request <= 4; request++) answers.push((await discovery(alone, key)).status);
  t.same(answers, [200, 200, 200, 429]);

  t.equal(logged(lifted, /LIMITS_ENABLED is false/).length, 1, 'lifted limits are said at start too');
  for (let request = 1; request <= 70; request++) {
    const response = await discovery(lifted, key);
    if (response.status !== 200) return t.fail(`request ${request} was ${response.status}`);
    if (response.headers.ratelimit !== undefined) return t.fail('RateLimit advertised without limits');
  }
  t.pass('70 requests of one key passed with limits lifted, without RateLimit fields');
});

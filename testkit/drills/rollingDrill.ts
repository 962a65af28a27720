/**
 * The rolling-restart and crash drill: three `gwapi serve` replicas behind HAProxy (haproxy.ts), one
 * PostgreSQL, one Redis, and a steady load from many keys (drillLoad.ts). Under that load each replica
 * is stopped with SIGTERM and started again in turn, then one is killed with SIGKILL while it holds
 * streams, and finally the load runs flat out against 1, 2 and 3 replicas. The report says what the
 * clients saw in each phase and what must hold (`problems`; none is a PASS).
 */
import { Agent, get, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { loadSettings } from '../../src/config.js';
import { startApiFleet } from './apiFleet.js';
import { countedGet } from './countedGet.js';
import type { DrillFixture } from './drillFixture.js';
import { drillTarget } from './drillFixture.js';
import { closedLoad, type DrillRequest, steadyLoad } from './drillLoad.js';
import { SERVER_COUNTERS, type ServerCounter, type ServerState } from './haproxy.js';
import { heldSlots } from './heldSlots.js';
import { type DrillRunOptions, phaseClock } from './phases.js';

export interface DrillOptions extends DrillRunOptions {
  databaseUrl: string;
  redisUrl: string;
  fixture: DrillFixture;
  /** How long each throughput run lasts. */
  throughputMs: number;
}

export interface PhaseReport {
  phase: string;
  from: number;
  to: number;
  requests: DrillRequest[];
  /** A year-long stream running on the replica when it got SIGTERM: read whole, or cut and retried. */
  drained?: Drained;
}

export interface Drained {
  whole: boolean;
  retriedOk?: boolean;
}

export interface KillReport {
  victim: string;
  inFlight: number;
  /** Load requests that failed, and those of them that began after the kill. */
  failed: number;
  failedRetriedOk: number;
  failedStartedAfter: number;
  /** From SIGKILL to HAProxy showing the server DOWN. */
  downAfterMs: number;
  downBoundMs: number;
  /** Streams held on the victim by the holder keys, and how many of them were cut. */
  held: number;
  cut: number;
  /** From SIGKILL until every holder key had all its concurrency slots again; refusals on the way. */
  slotsBackAfterMs: number;
  slotsRefused: number;
  /** The holders' slots Redis counted at the kill, and when their leases had all run out. */
  slotsInRedisAtKill: number;
  slotsFreeInRedisAfterMs: number;
  leaseMs: number;
  /** Growth of HAProxy's counters over the kill: on the victim, and errors on every other server. */
  victimCounters: Record<ServerCounter, number>;
  otherServersErrors: number;
}

export interface ThroughputReport {
  replicas: number;
  requests: DrillRequest[];
  durationMs: number;
}

export interface DrillReport {
  phases: PhaseReport[];
  kill: KillReport;
  throughput: ThroughputReport[];
  problems: string[];
}

const REPLICAS = 3;
const THROUGHPUT_CONCURRENCY = 16;
/** Polling HAProxy's view and the slot check. */
const POLL_MS = 50;
const SLOT_POLL_MS = 250;
/** How long after SIGTERM the stream running on the replica is read on. */
const DRAIN_READ_AFTER_MS = 500;
/** Scheduling slack on a busy machine on top of HAProxy's bound. */
const MARGIN_MS = 1000;
/** On top of the lease: the slot check's polling and a request through HAProxy on a busy machine. */
const SLOT_CHECK_SLACK_MS = 2500;

/** Check parameters of the `default-server` line of deploy/haproxy.cfg, e.g. `inter 2s fall 2`. */
export function checkTiming(config: string): { interMs: number; fall: number; rise: number } {
  const line = /^\s*default-server .*$/m.exec(config)?.[0] ?? '';
  const value = (name: string) => /\s(\d+)(ms|s)?(?=\s|$)/.exec(line.split(` ${name}`)[1] ?? '');
  const inter = value('inter');
  const [fall, rise] = [value('fall'), value('rise')];
  if (!inter || !fall || !rise) throw new Error(`no inter/fall/rise in: ${line}`);
  return {
    interMs: Number(inter[1]) * (inter[2] === 'ms' ? 1 : 1000),
    fall: Number(fall[1]),
    rise: Number(rise[1]),
  };
}

export async function runDrill(options: DrillOptions, haproxyConfig: string): Promise<DrillReport> {
  const { fixture, log = () => {} } = options;
  const settings = loadSettings({});
  const leaseMs = settings.CONCURRENCY_LEASE_SECONDS * 1000;
  const timing = checkTiming(haproxyConfig);
  const fleet = await startApiFleet({
    replicas: REPLICAS,
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    folder: options.folder,
    owner: options.owner,
    watch: options.watch,
  });
  const { names, ports, replicas, haproxy } = fleet;
  const problems: string[] = [];
  const redis = new Redis(options.redisUrl, { lazyConnect: true });
  try {
    await redis.connect();
    const target = drillTarget(haproxy.base, fixture);
    const load = steadyLoad(target, fixture.loadKeys, options.periodMs);
    const { windows, phase } = phaseClock<{ drained: Drained }>(log);
    const settle = () => sleep(options.settleMs, undefined);

    await phase('before', settle);
    for (const [i, name] of names.entries()) {
      await phase(`SIGTERM ${name}, start again, until UP`, async () => {
        const [holder] = fixture.holders;
        const running = await holdStreams(`http://127.0.0.1:${ports[i]}`, [holder!.key], fixture.holdPath, 1);
        const stopped = replicas[i]!.stop('SIGTERM');
        // Read once the replica drains: it closed its listener, and this stream must still go on.
        await sleep(DRAIN_READ_AFTER_MS);
        const whole = (await running.read()) === 0;
        await stopped;
        await fleet.restart(i);
        await fleet.untilStatus([name], 'UP');
        return {
          drained: whole
            ? { whole }
            : { whole, retriedOk: await servedWhole(haproxy.base, holder!.key, fixture.holdPath) },
        };
      });
      await phase(`after ${name}`, settle);
    }

    const victim = 1;
    const holders = await holdStreams(
      `http://127.0.0.1:${ports[victim]}`,
      fixture.holders.map(({ key }) => key),
      fixture.holdPath,
      settings.CONCURRENCY_LIMIT,
    );
    const holderIds = fixture.holders.map(({ keyId }) => keyId);
    const countersBefore = await haproxy.servers();
    const slotsInRedisAtKill = await heldSlots(redis, holderIds);
    const killedAt = performance.now();
    let downAfterMs = Number.NaN;
    let slotsFreeInRedisAfterMs = Number.NaN;
    let slots = { afterMs: Number.NaN, refused: 0 };
    await phase(`SIGKILL ${names[victim]}, start again, until UP`, async () => {
      replicas[victim]!.child.kill('SIGKILL');
      const down = fleet.untilStatus([names[victim]!], 'DOWN').then(() => {
        downAfterMs = performance.now() - killedAt;
      });
      const back = slotsBack(haproxy.base, fixture, settings.CONCURRENCY_LIMIT, leaseMs * 3).then((s) => {
        slots = { afterMs: s.at - killedAt, refused: s.refused };
      });
      const free = untilNoSlots(redis, holderIds, leaseMs * 3).then(() => {
        slotsFreeInRedisAfterMs = performance.now() - killedAt;
      });
      await Promise.all([down, back, free]);
      await fleet.restart(victim);
      await fleet.untilStatus([names[victim]!], 'UP');
      return undefined;
    });
    const grown = counterGrowth(countersBefore, await haproxy.servers());
    await phase(`after ${names[victim]}`, settle);
    await load.stop();
    // Each phase's requests are those begun in it, counted once all have ended.
    const phases = windows.map((window) => ({ ...window, requests: load.between(window.from, window.to) }));

    const cut = await holders.read();
    const failed = load.requests.filter((r) => r.outcome === 'failed');
    const failedAtKill = failed.filter((r) => r.startedAt <= killedAt && r.endedAt > killedAt);
    const kill: KillReport = {
      victim: names[victim]!,
      inFlight: load.inFlightAt(killedAt),
      failed: failedAtKill.length,
      failedRetriedOk: failedAtKill.filter((r) => r.retry === 'ok').length,
      failedStartedAfter: failed.filter((r) => r.startedAt > killedAt && r.startedAt < windows.at(-1)!.to)
        .length,
      downAfterMs,
      downBoundMs: timing.interMs * timing.fall,
      held: holders.count,
      cut,
      slotsBackAfterMs: slots.afterMs,
      slotsRefused: slots.refused,
      slotsInRedisAtKill,
      slotsFreeInRedisAfterMs,
      leaseMs,
      victimCounters: grown.get(names[victim]!)!,
      otherServersErrors: names
        .filter((name) => name !== names[victim])
        .reduce((sum, name) => sum + grown.get(name)!.econ + grown.get(name)!.eresp, 0),
    };

    const throughput: ThroughputReport[] = [];
    for (let active = 1; active <= REPLICAS; active++) {
      for (const [i, name] of names.entries()) await haproxy.setState(name, i < active ? 'ready' : 'maint');
      await fleet.untilStatus(names.slice(0, active), 'UP');
      const started = performance.now();
      const requests = await closedLoad(
        target,
        fixture.loadKeys,
        THROUGHPUT_CONCURRENCY,
        options.throughputMs,
      );
      throughput.push({ replicas: active, requests, durationMs: performance.now() - started });
      log(`throughput with ${active}: ${requests.length} requests`);
    }

    problems.push(...judge(phases, failedAtKill, kill, throughput));
    return { phases, kill, throughput, problems };
  } finally {
    redis.disconnect();
    await fleet.stop();
  }
}

function judge(
  phases: PhaseReport[],
  failedAtKill: DrillRequest[],
  kill: KillReport,
  throughput: ThroughputReport[],
): string[] {
  const problems: string[] = [];
  const atKill = new Set(failedAtKill);
  for (const { phase, requests } of phases) {
    if (requests.length === 0) problems.push(`${phase}: no request ran`);
    for (const request of requests) {
      if (request.outcome !== 'failed' || atKill.has(request)) continue;
      // Cut off by a drain that ran out of time is documented; the client's retry must then succeed.
      const documented = request.cause === 'cut off' && request.retry === 'ok';
      if (!documented) problems.push(`${phase}: a ${request.kind} request failed (${request.cause})`);
    }
  }
  for (const { phase, drained } of phases) {
    if (drained && !drained.whole && !drained.retriedOk) {
      problems.push(`${phase}: the stream running at SIGTERM was cut and its retry failed`);
    }
  }
  for (const request of failedAtKill) {
    if (request.retry !== 'ok') problems.push(`in flight at the kill: the retry of a ${request.kind} failed`);
  }
  if (kill.failed > kill.inFlight)
    problems.push(`${kill.failed} failed at the kill, only ${kill.inFlight} in flight`);
  if (!(kill.downAfterMs <= kill.downBoundMs + MARGIN_MS)) {
    problems.push(`HAProxy took ${Math.round(kill.downAfterMs)} ms to take the killed replica out`);
  }
  if (kill.held === 0 || kill.cut !== kill.held)
    problems.push(`${kill.cut} of ${kill.held} held streams cut`);
  if (kill.slotsInRedisAtKill === 0) problems.push('Redis counted no slot of the holders at the kill');
  if (!(kill.slotsFreeInRedisAfterMs <= kill.leaseMs + MARGIN_MS)) {
    problems.push(`the killed replica's leases ran out after ${Math.round(kill.slotsFreeInRedisAfterMs)} ms`);
  }
  if (kill.otherServersErrors > 0) problems.push(`${kill.otherServersErrors} errors on replicas not killed`);
  if (!(kill.slotsBackAfterMs <= kill.leaseMs + SLOT_CHECK_SLACK_MS)) {
    problems.push(`the killed replica's slots came back after ${Math.round(kill.slotsBackAfterMs)} ms`);
  }
  // A refusal first shows that the slots were held until their lease ran out, not lost with the replica.
  if (kill.slotsRefused === 0)
    problems.push('no holder key was refused while the killed replica held its slots');
  for (const run of throughput) {
    const failed = run.requests.filter((r) => r.outcome !== 'ok').length;
    if (failed > 0) problems.push(`throughput with ${run.replicas}: ${failed} requests not ok`);
  }
  return problems;
}

/**
 * Each of `keys` opens `perKey` streams of `path` straight on `base` (one replica) and leaves them
 * unread after the head, so that each holds its slot there. `read` reads them to their end, whole or
 * cut, and says how many were cut.
 */
async function holdStreams(base: string, keys: string[], path: string, perKey: number) {
  interface Held {
    response: IncomingMessage;
    /** Whether the whole body arrived, once the response is over (whole, cut, or its socket lost). */
    over: Promise<boolean>;
  }
  const heads = keys.flatMap((key) =>
    Array.from(
      { length: perKey },
      () =>
        new Promise<Held>((resolve, reject) => {
          const req = get(`${base}${path}`, { headers: { 'x-api-key': key }, agent: false }, (res) => {
            res.pause();
            res.on('error', () => {});
            resolve({
              response: res,
              over: new Promise((over) => res.on('close', () => over(res.complete))),
            });
          });
          req.on('error', reject);
        }),
    ),
  );
  const held = await Promise.all(heads);
  const refused = held.filter(({ response }) => response.statusCode !== 200);
  if (refused.length > 0) throw new Error(`a holder stream got ${refused[0]!.response.statusCode}`);
  return {
    count: held.length,
    async read(): Promise<number> {
      for (const { response } of held) response.resume();
      const whole = await Promise.all(held.map(({ over }) => over));
      return whole.filter((complete) => !complete).length;
    },
  };
}

/**
 * Through HAProxy, each holder key tries to open all its slots at once until it can: the killed
 * replica's leases must run out for that. Returns when the last key succeeded.
 */
async function slotsBack(base: string, fixture: DrillFixture, concurrency: number, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  let refused = 0;
  for (const { key } of fixture.holders) {
    for (;;) {
      const agent = new Agent({ keepAlive: false });
      // All at once: each response is held at its first bytes until every one has its answer.
      const answered = Array.from({ length: concurrency }, () => {
        let resolve!: () => void;
        return { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
      });
      const all = Promise.all(answered.map((answer) => answer.promise));
      const statuses = await Promise.all(
        answered.map((answer) =>
          countedGet(
            agent,
            `${base}${fixture.holdPath}`,
            { 'x-api-key': key },
            {
              stallMs: 30_000,
              onBodyStart: answer.resolve,
              leave: { afterBytes: 1, when: all },
            },
          )
            .then((response) => response.status)
            .finally(answer.resolve),
        ),
      );
      agent.destroy();
      if (statuses.every((status) => status === 200)) break;
      refused++;
      if (performance.now() > deadline) throw new Error(`slots of a holder key never came back: ${statuses}`);
      await sleep(SLOT_POLL_MS);
    }
  }
  return { at: performance.now(), refused };
}

/** A whole 200 of `path` through `base`: the retry of a stream that was cut. */
async function servedWhole(base: string, key: string, path: string): Promise<boolean> {
  const agent = new Agent({ keepAlive: false });
  try {
    const response = await countedGet(agent, `${base}${path}`, { 'x-api-key': key }, { stallMs: 30_000 });
    return response.status === 200 && response.complete && response.tail.endsWith(']}');
  } catch {
    return false;
  } finally {
    agent.destroy();
  }
}

/** How much each server's counters grew between two readings of `show stat`. */
function counterGrowth(
  before: ServerState[],
  after: ServerState[],
): Map<string, Record<ServerCounter, number>> {
  return new Map(
    after.map(({ name, counters }) => {
      const earlier = before.find((server) => server.name === name)!.counters;
      const growth = Object.fromEntries(SERVER_COUNTERS.map((c) => [c, counters[c] - earlier[c]]));
      return [name, growth as Record<ServerCounter, number>];
    }),
  );
}

/** Waits until Redis counts no live lease of `keyIds`. */
async function untilNoSlots(redis: Redis, keyIds: string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((await heldSlots(redis, keyIds)) > 0) {
    if (performance.now() > deadline) throw new Error('slots still counted in Redis');
    await sleep(POLL_MS);
  }
}

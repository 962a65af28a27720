/**
 * The simulated API clients of the soak: each a loop with a key of its own and a keep-alive agent, paced
 * within the contract's limits (30 requests per minute sustained, one request in flight) unless it is the
 * one that breaks them on purpose. Every answer is checked against what the fixture makes certain (well
 * counts, measurements per day, the year's exact size), cheaply: large bodies are counted, not parsed.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../../src/contract.js';
import { seriesPath, WELLS_PATH } from '../../testkit/apiPaths.js';
import { type CountedGetOptions, type CountedResponse, countedGet } from '../../testkit/drills/countedGet.js';
import { dayAfterStart } from '../../testkit/seriesFixture.js';
import type { Tally } from './soakTally.js';

export interface SoakTube {
  identifier: string;
  /** Measurements in each of its first `days` days (none after). */
  perDay: number;
  days: number;
}

export interface SoakTarget {
  base: string;
  /** The tube with a year of 1-minute data. */
  year: SoakTube;
  tally: Tally;
  /** No request starts after this (performance.now()). */
  deadline: number;
}

/** Stall limits: a day answers in milliseconds, a year streams in seconds on an idle machine. */
const SMALL_STALL_MS = 15_000;
const YEAR_STALL_MS = 30_000;
const MB = 2 ** 20;

/** Below the contract's sustained 0.5 requests per second, with some variation between clients. */
export const POLITE_PERIOD_MS = 2500;

/**
 * One client: `step` again and again, each start `periodMs` (±20 %) after the last one, until the
 * deadline. A step that takes longer is followed at once.
 */
async function clientLoop(target: SoakTarget, periodMs: number, step: () => Promise<void>): Promise<void> {
  // Clients do not start in lockstep.
  await sleep(Math.random() * periodMs);
  while (performance.now() < target.deadline) {
    const started = performance.now();
    await step();
    const wait = started + periodMs * (0.8 + Math.random() * 0.4) - performance.now();
    if (wait > 0) await sleep(Math.min(wait, Math.max(0, target.deadline - performance.now())));
  }
}

/** A client's requests: each checked, every failure tallied under its kind (never thrown). */
function clientRequests(target: SoakTarget, key: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const headers = { 'x-api-key': key, accept: 'application/json' };
  const { tally } = target;

  return {
    agent,
    /** GETs `path`; `check` returns what is wrong with the response, or nothing. */
    async get(
      kind: string,
      path: string,
      options: CountedGetOptions & { headers?: Record<string, string> },
      check: (response: CountedResponse) => string | undefined,
    ): Promise<CountedResponse | undefined> {
      try {
        const response = await countedGet(
          agent,
          `${target.base}${path}`,
          { ...headers, ...options.headers },
          options,
        );
        tally.response(kind, response.status);
        if (response.headers['api-version'] !== API_VERSION)
          tally.error(kind, `no API-Version: ${API_VERSION}`);
        const wrong = check(response);
        if (wrong) tally.error(kind, wrong);
        return response;
      } catch (error) {
        tally.error(kind, (error as Error).message);
        return undefined;
      }
    },
  };
}

type Check = (response: CountedResponse) => string | undefined;

/** A whole response of `status` whose parsed body `inspect` finds nothing wrong with. */
const whole =
  (status: number, inspect: (body: unknown, response: CountedResponse) => string | undefined): Check =>
  (response) => {
    if (response.status !== status) return `status ${response.status}`;
    if (!response.complete) return 'response cut off';
    try {
      return inspect(JSON.parse(response.body!.toString()), response);
    } catch {
      return 'body is not JSON';
    }
  };

const problem = (status: number): Check =>
  whole(status, (body, response) => {
    if (!String(response.headers['content-type']).startsWith('application/problem+json')) {
      return 'problem without application/problem+json';
    }
    return (body as { status?: number }).status === status ? undefined : 'problem with another status';
  });

const tooMany =
  (retryAfter: (seconds: number) => boolean): Check =>
  (response) =>
    problem(429)(response) ??
    (retryAfter(Number(response.headers['retry-after'])) ? undefined : '429 without a fitting Retry-After');

const wellList = (expectedWells: number): Check =>
  whole(200, (body) =>
    Array.isArray(body) && body.length === expectedWells
      ? undefined
      : `expected ${expectedWells} wells, got ${Array.isArray(body) ? body.length : 'no list'}`,
  );

/** Discovery at a polite pace: the list of exactly the wells its grants reach. */
export function discoveryClient(target: SoakTarget, key: string, expectedWells: number) {
  const client = clientRequests(target, key);
  return clientLoop(target, POLITE_PERIOD_MS, async () => {
    await client.get(
      'discovery',
      WELLS_PATH,
      { keepBody: true, stallMs: SMALL_STALL_MS },
      wellList(expectedWells),
    );
  }).finally(() => client.agent.destroy());
}

/**
 * Short series at a polite pace: a random day of one of its tubes (some days have no data: an empty
 * series), now and then an unknown tube (404) or an interval the wrong way round (400).
 */
export function dayClient(target: SoakTarget, key: string, tubes: SoakTube[]) {
  const client = clientRequests(target, key);
  const small = { keepBody: true, stallMs: SMALL_STALL_MS };
  return clientLoop(target, POLITE_PERIOD_MS, async () => {
    const tube = tubes[Math.floor(Math.random() * tubes.length)]!;
    // A third past the data: empty days too.
    const day = Math.floor(Math.random() * Math.min(366, tube.days * 1.3));
    const [from, to] = [dayAfterStart(day), dayAfterStart(day + 1)];
    const dice = Math.random();
    if (dice < 0.1) {
      await client.get('unknown tube', seriesPath(randomUUID(), from, to), small, problem(404));
    } else if (dice < 0.2) {
      await client.get('interval reversed', seriesPath(tube.identifier, to, from), small, problem(400));
    } else {
      const expected = day < tube.days ? tube.perDay : 0;
      await client.get(
        'day',
        seriesPath(tube.identifier, from, to),
        small,
        whole(200, (body) => {
          const series = body as { tubeIdentifier?: string; measurements?: unknown[] };
          if (series.tubeIdentifier !== tube.identifier) return 'another tube';
          const got = series.measurements?.length;
          return got === expected ? undefined : `expected ${expected} measurements, got ${got}`;
        }),
      );
    }
  }).finally(() => client.agent.destroy());
}

/** The size of the year's plain body, learnt from the first whole one; every later one must match. */
function yearSize() {
  let bytes: number | undefined;
  return (response: CountedResponse): string | undefined => {
    if (response.status !== 200) return `status ${response.status}`;
    if (!response.complete) return 'response cut off';
    if (!response.tail.endsWith(']}')) return `body ends with ${JSON.stringify(response.tail.slice(-4))}`;
    bytes ??= response.bytes;
    return response.bytes === bytes ? undefined : `year of ${response.bytes} bytes, earlier ${bytes}`;
  };
}

/**
 * Year-long series, one at a time, every 5 s at most: read whole (plain, and brotli decompressed to
 * the same bytes), left after the first chunk, left somewhere in the middle.
 */
export function yearClient(target: SoakTarget, key: string) {
  const client = clientRequests(target, key);
  const path = seriesPath(target.year.identifier, dayAfterStart(0), dayAfterStart(366));
  const sameYear = yearSize();
  const leftAtStatus200: Check = (response) =>
    response.status === 200 ? undefined : `status ${response.status}`;
  const modes = [
    () => client.get('year whole', path, { stallMs: YEAR_STALL_MS }, sameYear),
    () =>
      client.get(
        'year left at first chunk',
        path,
        { stallMs: YEAR_STALL_MS, leave: { afterBytes: 1 } },
        leftAtStatus200,
      ),
    () =>
      client.get(
        'year whole, br',
        path,
        { stallMs: YEAR_STALL_MS, brotli: true, headers: { 'accept-encoding': 'br' } },
        sameYear,
      ),
    () =>
      client.get(
        'year left mid-body',
        path,
        { stallMs: YEAR_STALL_MS, leave: { afterBytes: Math.floor(MB + Math.random() * 20 * MB) } },
        leftAtStatus200,
      ),
  ];
  let turn = Math.floor(Math.random() * modes.length);
  return clientLoop(target, 5000, async () => {
    await modes[turn++ % modes.length]!();
  }).finally(() => client.agent.destroy());
}

/** A client that ignores the rate: discovery twice a second, refused once its bucket is empty. */
export function greedyClient(target: SoakTarget, key: string, expectedWells: number) {
  const client = clientRequests(target, key);
  const listed = wellList(expectedWells);
  const refused = tooMany((seconds) => seconds >= 1);
  return clientLoop(target, 500, async () => {
    await client.get(
      'greedy discovery',
      WELLS_PATH,
      { keepBody: true, stallMs: SMALL_STALL_MS },
      (response) => (response.status === 429 ? refused(response) : listed(response)),
    );
  }).finally(() => client.agent.destroy());
}

/**
 * A client that asks for a third request in flight every 10 s (3 tokens per 10 s, under the rate):
 * two year streams held open unread, then a discovery request, which must be refused for concurrency
 * (429, Retry-After: 1); then it leaves both streams. A stream refused here would mean a slot of an
 * earlier round was never given back.
 */
export function crowdClient(target: SoakTarget, key: string) {
  const client = clientRequests(target, key);
  const path = seriesPath(target.year.identifier, dayAfterStart(0), dayAfterStart(366));
  return clientLoop(target, 10_000, async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const streams = [0, 1].map(() => {
      let started = () => {};
      const bodyStarted = new Promise<void>((resolve) => (started = resolve));
      const done = client.get(
        'crowd: year held',
        path,
        { stallMs: YEAR_STALL_MS, leave: { afterBytes: 1, when: released }, onBodyStart: started },
        (response) => (response.status === 200 ? undefined : `status ${response.status}`),
      );
      return { done, inFlight: Promise.race([bodyStarted, done]) };
    });
    await Promise.all(streams.map((stream) => stream.inFlight));
    await client.get(
      'crowd: third at once',
      WELLS_PATH,
      { keepBody: true, stallMs: SMALL_STALL_MS },
      tooMany((seconds) => seconds === 1),
    );
    release();
    await Promise.all(streams.map((stream) => stream.done));
  }).finally(() => client.agent.destroy());
}

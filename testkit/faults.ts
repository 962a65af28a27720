/**
 * What the fault tests (test/faults/) and the faults drill (drills/faults.ts) share: a `gwapi serve` replica with its metrics listener and
 * shared limits, requests that always come back with an outcome (a response, a cut-off body, or the
 * reason there was none: a test must fail, not hang), and readings of the replica's memory and metrics.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { freePort } from '../src/db/embedded.js';
import { type Replica, spawnReplica } from './gwapi.js';
import { inspectFlag, liveMemoryMb } from './inspector.js';
import { type OpenStream, openStream } from './openStream.js';
import { captureProcess } from './outputCapture.js';
import { type Owner, processCpuMs, residentMb } from './processes.js';

/**
 * Growth of a server's live memory (what a full garbage collection leaves) allowed over a run of
 * aborts. A response kept after its client left keeps its request, reply, socket and stream with the
 * stream's read-ahead: the control in test/faults/aborts.test.ts, which keeps every one, shows how much.
 */
export const LIVE_MEMORY_GROWTH_BOUND_MB = 4;

/** How long every kind of request may take to be served again once PostgreSQL accepts connections. */
export const RECOVERED_WITHIN_MS = 10_000;

export interface FaultReplica extends Replica {
  /** `http://127.0.0.1:PORT` of its metrics listener. */
  metricsBase: string;
  /** Resident memory of the process, in MB (Linux). */
  residentMb(): number;
  /** What the process still holds after a full garbage collection, in MB (through its inspector). */
  liveMemoryMb(): Promise<number>;
  /** CPU time the process has used so far (user + system), in seconds (Linux). */
  cpuSeconds(): number;
  /** The value of one sample of its metrics (name with labels, as exposed), or undefined. */
  metric(sample: string): Promise<number | undefined>;
}

/**
 * A replica on `databaseUrl` with the suite's Redis for limits (CONCURRENCY_LIMIT 2, the default), a
 * rate limit high enough for a test's hundreds of requests of one key, and its inspector on loopback.
 */
export async function startFaultReplica(
  owner: Owner,
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
): Promise<FaultReplica> {
  const [metricsPort, inspectorPort] = [await freePort(), await freePort()];
  const replica = await spawnReplica(
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.TEST_REDIS_URL,
      METRICS_PORT: String(metricsPort),
      RATE_LIMIT_BURST: '100000',
      RATE_LIMIT_PER_SECOND: '1000',
      ...env,
      NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} ${inspectFlag(inspectorPort)}`.trim(),
    },
    { owner, watch: captureProcess },
  );
  const metricsBase = `http://127.0.0.1:${metricsPort}`;
  const pid = replica.child.pid!;
  return {
    ...replica,
    metricsBase,
    residentMb: () => residentMb(pid),
    liveMemoryMb: () => liveMemoryMb(inspectorPort),
    cpuSeconds: () => processCpuMs(pid) / 1000,
    async metric(sample) {
      const text = (await fetchOutcome(metricsBase, '/metrics', {})).body;
      const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
      return line === undefined ? undefined : Number(line.slice(sample.length + 1));
    },
  };
}

export interface Outcome {
  /** 0 when no response head came at all. */
  status: number;
  contentType?: string;
  body: string;
  /** The body ended properly (false: the connection closed in the middle of it, or before a head). */
  complete: boolean;
  /** Why there was no complete response: `timeout` (a hang), or the socket error. */
  failure?: string;
  ms: number;
}

/** A GET that resolves with what happened, within `timeoutMs` at most (then `failure: 'timeout'`). */
export function fetchOutcome(
  base: string,
  path: string,
  headers: Record<string, string>,
  timeoutMs = 10_000,
): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let status = 0;
    let contentType: string | undefined;
    const finish = (complete: boolean, failure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      const body = Buffer.concat(chunks).toString();
      resolve({ status, contentType, body, complete, failure, ms: performance.now() - started });
    };
    const req = request(`${base}${path}`, { headers, agent: false }, (res) => {
      status = res.statusCode ?? 0;
      contentType = res.headers['content-type'];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => finish(true));
      res.on('error', (error) => finish(false, error.message));
      res.on('aborted', () => finish(false, 'aborted'));
    });
    const timer = setTimeout(() => finish(false, 'timeout'), timeoutMs);
    req.on('error', (error) => finish(false, error.message));
    req.end();
  });
}

/** A 5xx answered as the contract says: a complete problem document of that status. */
export function isServerProblem(outcome: Outcome): boolean {
  if (!outcome.complete || outcome.status < 500 || outcome.contentType !== 'application/problem+json') {
    return false;
  }
  try {
    return (JSON.parse(outcome.body) as { status?: unknown }).status === outcome.status;
  } catch {
    return false;
  }
}

/** A short description for assertion messages. */
export const describe = (outcome: Outcome) =>
  `${outcome.status} ${outcome.complete ? 'complete' : `incomplete (${outcome.failure})`} after ${Math.round(outcome.ms)} ms`;

/** Asks `read` every 50 ms until it gives `expected` or `timeoutMs` is over; returns the last answer. */
export async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 5000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value === expected || performance.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `promise`, or `fallback` if it has not settled within `ms` (the timer does not outlive it). */
export async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

export const SERIES_START = '{"tubeIdentifier"';

/**
 * `count` streams of `path` at once, each begun and then paused (a client that reads no more); undefined
 * when one was refused with a 5xx (the database not back yet). A 429 throws: with the key's earlier
 * responses over, it means a concurrency slot was never freed.
 */
export async function pausedStreams(
  base: string,
  path: string,
  key: string,
  count: number,
): Promise<OpenStream[] | undefined> {
  const streams = Array.from({ length: count }, () => openStream(base, path, key));
  // Each paused as soon as its own first chunk is in: a fast stream would otherwise run to its end
  // while the others are still starting.
  for (const stream of streams) void stream.firstChunk.then(() => stream.pause());
  const firsts = await Promise.all(
    streams.map((stream) => Promise.race([stream.firstChunk, stream.done.then(({ body }) => body)])),
  );
  for (const stream of streams) stream.pause();
  if (firsts.every((first) => first.toString().startsWith(SERIES_START))) return streams;
  for (const stream of streams) stream.abort();
  const refusal = firsts.map(String).find((first) => !first.startsWith(SERIES_START));
  if (refusal?.includes('"status":429')) throw new Error(`a slot was not freed: ${refusal}`);
  return undefined;
}

/** How a client leaves; resolves with the status it saw (0: none, it left before the head). */
export type Abort = (base: string, path: string, key: string) => Promise<number>;

/** The request is written and the connection closed `afterMs` later (0: at once), whatever came back. */
const closeAfter =
  (afterMs: number): Abort =>
  (base, path, key) =>
    new Promise((resolve) => {
      let status = 0;
      const socket = connect(Number(new URL(base).port), '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`);
        setTimeout(() => socket.destroy(), afterMs);
      });
      socket.on('data', (chunk: Buffer) => (status ||= Number(chunk.toString('latin1', 9, 12))));
      socket.on('error', () => {});
      socket.on('close', () => resolve(status));
    });

/** The connection is closed when the response head (or the first chunk of the body) has arrived. */
const closeOn =
  (event: 'head' | 'first chunk'): Abort =>
  (base, path, key) =>
    new Promise((resolve) => {
      let status = 0;
      const req = request(`${base}${path}`, { headers: { 'x-api-key': key }, agent: false }, (res) => {
        status = res.statusCode ?? 0;
        if (event === 'head') req.destroy();
        else res.once('data', () => req.destroy());
      });
      req.on('error', () => {});
      req.on('close', () => resolve(status));
      req.end();
    });

/**
 * Where the client leaves, and on which series. Leaving before the head works the same on any series
 * (the stream is opened, then finds its response closed), so those use a short one, which costs the
 * server less than a full first batch; leaving after the head or a chunk is done in a long one.
 */
export const ABORT_POINTS: [string, Abort, 'short' | 'long'][] = [
  ['at once', closeAfter(0), 'short'],
  ['after 2 ms', closeAfter(2), 'short'],
  ['after the head', closeOn('head'), 'long'],
  ['after the first chunk', closeOn('first chunk'), 'long'],
];

/** Statuses the leaving clients saw, by where they left: { point: { status: count } }. */
export type AbortStatuses = Record<string, Record<number, number>>;

/**
 * `count` aborts, one lane per key (one request of a key at a time, so its CONCURRENCY_LIMIT of 2 is
 * met only when the server has not yet noticed that two earlier clients left), each lane cycling
 * through the abort points.
 */
export async function abortMany(
  base: string,
  paths: Record<'short' | 'long', string>,
  keys: string[],
  count: number,
): Promise<AbortStatuses> {
  const statuses: AbortStatuses = {};
  let next = 0;
  await Promise.all(
    keys.map(async (key) => {
      while (next < count) {
        const [point, abort, series] = ABORT_POINTS[next++ % ABORT_POINTS.length]!;
        const status = await abort(base, paths[series], key);
        const seen = statuses[point] ?? {};
        seen[status] = (seen[status] ?? 0) + 1;
        statuses[point] = seen;
      }
    }),
  );
  return statuses;
}

/** `count` aborts (abortMany), timed: their statuses, wall seconds and the server's CPU seconds. */
export async function timedAborts(
  replica: FaultReplica,
  paths: Record<'short' | 'long', string>,
  keys: string[],
  count: number,
) {
  const started = performance.now();
  const cpuBefore = replica.cpuSeconds();
  const statuses = await abortMany(replica.base, paths, keys, count);
  const seconds = (performance.now() - started) / 1000;
  return { statuses, seconds, serverCpu: replica.cpuSeconds() - cpuBefore };
}

/** How many aborts saw `status` (all of them when not given). */
export const countStatuses = (statuses: AbortStatuses, status?: number) =>
  Object.values(statuses)
    .flatMap((seen) => Object.entries(seen))
    .filter(([seen]) => status === undefined || Number(seen) === status)
    .reduce((sum, [, n]) => sum + n, 0);

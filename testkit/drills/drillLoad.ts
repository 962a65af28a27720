/**
 * The drill's clients: many keys, each asking for discovery or a 30-day series in turn, every answer
 * checked and recorded with its start, end and, when it failed, why. A failed request is tried once
 * more at once, as a client would, and the retry's outcome is recorded with it.
 */
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { seriesPath, WELLS_PATH } from '../apiPaths.js';
import { type CountedResponse, countedGet } from './countedGet.js';

export interface DrillTube {
  identifier: string;
  from: string;
  to: string;
}

export interface DrillTarget {
  base: string;
  /** Tubes with 30 days of data, asked for whole. */
  tubes: DrillTube[];
  /** Wells every key's discovery must list. */
  wells: number;
}

export interface DrillRequest {
  kind: 'discovery' | 'series';
  startedAt: number;
  endedAt: number;
  outcome: 'ok' | 'limited' | 'failed';
  /** Why it failed: a status, a cut body, a refused or reset connection, a wrong body. */
  cause?: string;
  /** The retry of a failed request. */
  retry?: 'ok' | 'limited' | 'failed';
}

const STALL_MS = 15_000;

/** One key's requests over a keep-alive agent of its own; series sizes are learnt from the first. */
function drillClient(target: DrillTarget, key: string, sizes: Map<string, number>) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { 'x-api-key': key, accept: 'application/json' };

  async function attempt(
    kind: DrillRequest['kind'],
    path: string,
  ): Promise<Pick<DrillRequest, 'outcome' | 'cause'>> {
    let response: CountedResponse;
    try {
      response = await countedGet(agent, `${target.base}${path}`, headers, {
        keepBody: kind === 'discovery',
        stallMs: STALL_MS,
      });
    } catch (error) {
      return { outcome: 'failed', cause: connectionCause(error as NodeJS.ErrnoException) };
    }
    if (response.status === 429) return { outcome: 'limited' };
    if (response.status !== 200) return { outcome: 'failed', cause: statusCause(response) };
    if (!response.complete) return { outcome: 'failed', cause: 'cut off' };
    const wrong =
      kind === 'discovery' ? wrongWells(response, target.wells) : wrongSeries(response, path, sizes);
    return wrong ? { outcome: 'failed', cause: wrong } : { outcome: 'ok' };
  }

  return {
    /** A request of `kind`, retried once if it failed; resolves with its record. */
    async request(kind: DrillRequest['kind']): Promise<DrillRequest> {
      const tube = target.tubes[Math.floor(Math.random() * target.tubes.length)]!;
      const path = kind === 'discovery' ? WELLS_PATH : seriesPath(tube.identifier, tube.from, tube.to);
      const startedAt = performance.now();
      const first = await attempt(kind, path);
      const endedAt = performance.now();
      const retry = first.outcome === 'failed' ? (await attempt(kind, path)).outcome : undefined;
      return { kind, startedAt, endedAt, ...first, ...(retry ? { retry } : {}) };
    },
    close: () => agent.destroy(),
  };
}

/** A third discovery, the rest series. */
const randomKind = (): DrillRequest['kind'] => (Math.random() < 1 / 3 ? 'discovery' : 'series');

/**
 * Each key asks again `periodMs` (±20 %) after its last request began, until stopped: a steady load
 * whose rate does not depend on how fast the service answers.
 */
export function steadyLoad(target: DrillTarget, keys: string[], periodMs: number) {
  const requests: DrillRequest[] = [];
  const sizes = new Map<string, number>();
  let running = true;
  const loops = keys.map(async (key) => {
    const client = drillClient(target, key, sizes);
    await sleep(Math.random() * periodMs);
    while (running) {
      const started = performance.now();
      requests.push(await client.request(randomKind()));
      const wait = started + periodMs * (0.8 + Math.random() * 0.4) - performance.now();
      if (wait > 0 && running) await sleep(wait);
    }
    client.close();
  });
  return {
    requests,
    /** Requests started at or after `from` and before `to`. */
    between: (from: number, to: number) => requests.filter((r) => r.startedAt >= from && r.startedAt < to),
    /** Requests in flight at `moment`. */
    inFlightAt: (moment: number) =>
      requests.filter((r) => r.startedAt <= moment && r.endedAt > moment).length,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** `concurrency` keys asking back to back for `durationMs`: what the deployment can serve. */
export async function closedLoad(
  target: DrillTarget,
  keys: string[],
  concurrency: number,
  durationMs: number,
): Promise<DrillRequest[]> {
  const requests: DrillRequest[] = [];
  const sizes = new Map<string, number>();
  const deadline = performance.now() + durationMs;
  await Promise.all(
    keys.slice(0, concurrency).map(async (key) => {
      const client = drillClient(target, key, sizes);
      while (performance.now() < deadline) requests.push(await client.request(randomKind()));
      client.close();
    }),
  );
  return requests;
}

function connectionCause(error: NodeJS.ErrnoException): string {
  if (error.code === 'ECONNREFUSED') return 'connection refused';
  if (error.code === 'ECONNRESET' || /socket hang up/.test(error.message)) return 'connection reset';
  // The response began, then its connection went: node:http calls that `aborted`.
  if (/aborted/.test(error.message)) return 'cut off';
  return error.message.startsWith('no byte for') ? 'stalled' : `error: ${error.message}`;
}

/** A 5xx of HAProxy's own (no replica) or of a replica (a problem document). */
function statusCause(response: CountedResponse): string {
  const problem = String(response.headers['content-type']).startsWith('application/problem+json');
  return `HTTP ${response.status}${problem ? '' : ' (HAProxy)'}`;
}

function wrongWells(response: CountedResponse, wells: number): string | undefined {
  try {
    const body = JSON.parse(response.body!.toString()) as unknown[];
    return body.length === wells ? undefined : `${body.length} wells, not ${wells}`;
  } catch {
    return 'discovery body is not JSON';
  }
}

function wrongSeries(
  response: CountedResponse,
  path: string,
  sizes: Map<string, number>,
): string | undefined {
  if (!response.tail.endsWith(']}')) return 'series without its end';
  const size = sizes.get(path) ?? response.bytes;
  sizes.set(path, size);
  return response.bytes === size ? undefined : `series of ${response.bytes} bytes, earlier ${size}`;
}

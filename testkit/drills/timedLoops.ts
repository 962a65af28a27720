/** The fairness drill's clients: loops of timed GETs, each body counted and checked whole. */
import type { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { countedGet } from './countedGet.js';

export interface Timed {
  startedAt: number;
  ms: number;
  status: number | 'error';
}

/** A GET of a JSON body: its status when the body came whole, else `error`. */
export async function timedGet(agent: Agent, url: string, key: string): Promise<Timed> {
  const startedAt = performance.now();
  try {
    const response = await countedGet(agent, url, { 'x-api-key': key }, { stallMs: 120_000 });
    const whole = response.complete && response.tail.endsWith('}');
    return { startedAt, ms: performance.now() - startedAt, status: whole ? response.status : 'error' };
  } catch {
    return { startedAt, ms: performance.now() - startedAt, status: 'error' };
  }
}

/**
 * Calls `work` every `periodMs` (from one start to the next) until stopped, keeping what each call
 * recorded (undefined: nothing).
 */
export function every<T>(periodMs: number, work: () => Promise<T | undefined>) {
  const done: T[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const recorded = await work();
      if (recorded !== undefined) done.push(recorded);
      const wait = started + periodMs - performance.now();
      if (wait > 0 && running) await sleep(wait);
    }
  })();
  return {
    done,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Loops of `request` until stopped; each loop waits `periodMs` (±20 %) from one start to the next. */
export function loops(n: number, periodMs: number, request: (loop: number) => Promise<Timed>) {
  const done: Timed[] = [];
  let running = true;
  const all = Array.from({ length: n }, async (_, loop) => {
    await sleep(Math.random() * periodMs);
    while (running) {
      const timed = await request(loop);
      done.push(timed);
      const wait = timed.startedAt + periodMs * (0.8 + Math.random() * 0.4) - performance.now();
      if (wait > 0 && running) await sleep(wait);
    }
  });
  return {
    done,
    async stop() {
      running = false;
      await Promise.all(all);
    },
  };
}

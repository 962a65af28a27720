import { setTimeout as sleep } from 'node:timers/promises';

/** Probes until `done` holds of the answer, which it returns; throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

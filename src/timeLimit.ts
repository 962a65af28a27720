/** A wait for an answer that gives up: health checks and the replica monitor must not hang with a server. */

/** No answer came within the time given. */
export class NoAnswer extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'NoAnswer';
  }
}

/** `work`'s outcome, or NoAnswer after `ms`; the work itself goes on (its late answer is ignored). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswer(ms)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

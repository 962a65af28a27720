/**
 * Runs `done` when a response is over (complete, or its connection gone), exactly once.
 *
 * A ServerResponse emits 'close' only once, so a listener added after it (by a hook that awaited a key
 * lookup or an admission while the client left) would never run: a concurrency slot or a gauge would be
 * held for as long as the process lives. Such a response is over already, so `done` runs at once.
 *
 * Every mechanism that waits for the end of a response (its log line, metrics, limits, bulk turns, the
 * client-gone signal) shares one 'close' listener per response: one each, beside those Node adds to a
 * streamed one, went past the emitter's limit of ten and printed a MaxListenersExceededWarning for every
 * streamed request.
 */
import type { ServerResponse } from 'node:http';

const waiting = new WeakMap<ServerResponse, (() => void)[]>();

export function whenResponseClosed(response: ServerResponse, done: () => void): void {
  if (response.closed) {
    done();
    return;
  }
  const callbacks = waiting.get(response);
  if (callbacks) {
    callbacks.push(done);
    return;
  }
  const all = [done];
  waiting.set(response, all);
  response.once('close', () => {
    waiting.delete(response);
    for (const callback of all) callback();
  });
}

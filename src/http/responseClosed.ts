/**
 * Runs `done` when a response is over (complete, or its connection gone), exactly once.
 *
 * A ServerResponse emits 'close' only once, so a listener added after it (by a hook that awaited a key
 * lookup or an admission while the client left) would never run: a concurrency slot or a gauge would be
 * held for as long as the process lives. Such a response is over already, so `done` runs at once.
 */
import type { ServerResponse } from 'node:http';

export function whenResponseClosed(response: ServerResponse, done: () => void): void {
  if (response.closed) done();
  else response.once('close', done);
}

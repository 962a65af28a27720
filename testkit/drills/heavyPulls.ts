/**
 * The fairness drill's heavy keys, in a worker thread of their own (testkit/drills/fairnessDrill.ts):
 * heavy clients are other clients, so reading their bodies must not delay the small requests' timings
 * on the drill's own event loop. Says `ready` once loaded (before the phase it is to run in, so that
 * loading it costs the small requests nothing), pulls `url` with each key in `loops` loops from its
 * first message on, and at its second stops and posts what each pull got.
 */
import { Agent } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { loops, timedGet } from './timedLoops.js';

export interface HeavyPullsData {
  url: string;
  keys: string[];
  loopsPerKey: number;
  periodMs: number;
}

const { url, keys, loopsPerKey, periodMs } = workerData as HeavyPullsData;
const agent = new Agent({ keepAlive: true });
parentPort!.once('message', () => {
  const pulls = loops(keys.length * loopsPerKey, periodMs, (loop) =>
    timedGet(agent, url, keys[loop % keys.length]!),
  );
  parentPort!.once('message', async () => {
    await pulls.stop();
    agent.destroy();
    parentPort!.postMessage(pulls.done);
  });
});
parentPort!.postMessage('ready');

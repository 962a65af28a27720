/**
 * `gwapi serve` replicas of a test (testkit/gwapi.ts), stopped when the test ends unless it killed
 * them first, their output kept for the suite's key scan.
 */
import type { Test } from 'tap';
import { type Replica, spawnReplica } from '../../testkit/gwapi.js';
import { captureProcess } from '../../testkit/outputCapture.js';

export function startReplica(t: Test, env: Record<string, string | undefined>): Promise<Replica> {
  return spawnReplica(env, { owner: t, watch: captureProcess });
}

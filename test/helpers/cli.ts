/** Runs `gwapi` as the operator would (testkit/gwapi.ts), its output kept for the suite's key scan. */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { type GwapiOptions, type GwapiOutcome, outcome, spawnGwapi } from '../../testkit/gwapi.js';
import { captureProcess } from '../../testkit/outputCapture.js';

export type CliResult = GwapiOutcome;

export interface CliOptions extends GwapiOptions {
  /** Written to standard input, which is then closed. */
  input?: string | Buffer;
}

/** Starts `gwapi` and returns the running process, for long-running commands. */
export function spawnCli(args: string[], options: GwapiOptions = {}): ChildProcessWithoutNullStreams {
  const child = spawnGwapi(args, options);
  // Everything a gwapi process says is checked for keys at the end of the suite.
  captureProcess(child, args);
  return child;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return outcome(spawnCli(args, options), options.input);
}

import { command, missingPrerequisites, type Prerequisite } from '../../testkit/prerequisites.js';

/**
 * A skip reason when a prerequisite is missing (testkit/prerequisites.ts), except in CI, where
 * .ci/run must have installed it (the test then fails on it). `command, debianPackage` for a command on PATH.
 */
export function unlessInstalled(need: Prerequisite | string, debianPackage?: string): string | false {
  const prerequisite = typeof need === 'string' ? command(need, debianPackage ?? need) : need;
  const line = process.env.CI ? undefined : missingPrerequisites([prerequisite], 'this test');
  return line ? `${line} (.ci/run does)` : false;
}

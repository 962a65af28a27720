import { spawnSync } from 'node:child_process';

const installed = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

/** A skip reason when `command` is missing, except in CI, where .ci/run must have installed it. */
export const unlessInstalled = (command: string, debianPackage: string) =>
  installed(command) || process.env.CI
    ? false
    : `${command} is not installed (apt-get install ${debianPackage}; .ci/run does)`;

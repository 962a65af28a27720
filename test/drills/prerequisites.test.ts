/**
 * Drills and benchmarks on a machine that lacks what they need (testkit/prerequisites.ts): one line on
 * stderr naming what is missing and how to install it, exit code 2, and nothing started. "A machine
 * that lacks": a PATH with only node, npm and sh in it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import t from 'tap';
import {
  command,
  missingPrerequisites,
  type Prerequisite,
  redisServer,
  unlessSet,
} from '../../testkit/prerequisites.js';
import { unlessInstalled } from '../helpers/installed.js';

const bare = await mkdtemp(join(tmpdir(), 'gwapi-bare-path-'));
t.teardown(() => rm(bare, { recursive: true, force: true }));
// The npm on the suite's PATH (Node's own, or Debian's /usr/bin/npm), run by the node beside it in `bare`.
const npm = (process.env.PATH ?? '')
  .split(delimiter)
  .map((folder) => join(folder, 'npm'))
  .find((file) => existsSync(file));
for (const [name, target] of [
  ['node', process.execPath],
  ['npm', npm!],
  ['sh', '/bin/sh'],
]) {
  await symlink(target!, join(bare, name!));
}

/** `command args` in the checkout with the bare PATH, a TMPDIR of its own, no servers configured. */
async function runBare(command: string, args: string[]) {
  const tmp = await mkdtemp(join(tmpdir(), 'gwapi-bare-tmp-'));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { HOME: process.env.HOME, PATH: bare, TMPDIR: tmp };
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve, reject) => child.on('close', resolve).on('error', reject));
  // Throwaway PostgreSQL clusters and drill folders are made there (testkit/postgres.ts).
  const made = (await readdir(tmp)).filter((name) => name.startsWith('gwapi-'));
  return { code, stdout, lines: stderr.split('\n').filter(Boolean), made };
}

// Debian installs haproxy in /usr/sbin, off a normal user's PATH: then that is the fix, not apt-get.
const haproxyInSbin = existsSync('/usr/sbin/haproxy');

t.test('npm run drill without haproxy, git and redis-server', async (t) => {
  const { code, stdout, lines, made } = await runBare(join(bare, 'npm'), ['run', 'drill']);
  t.same(lines, [
    'npm run drill needs haproxy, git, redis-server (or REDIS_URL): ' +
      (haproxyInSbin
        ? 'apt-get install git redis-server; add /usr/sbin to PATH'
        : 'apt-get install haproxy git redis-server'),
  ]);
  t.equal(code, 2);
  t.notMatch(stdout, /Rolling restart/, 'no report begun');
  t.same(made, [], 'no PostgreSQL cluster or drill folder made');
});

t.test('npm run bench checks every chosen scenario before running any', async (t) => {
  const { code, stdout, lines, made } = await runBare(join(bare, 'npm'), [
    'run',
    'bench',
    '--',
    'formats,limits',
  ]);
  t.same(lines, ['npm run bench needs redis-server (or REDIS_URL): apt-get install redis-server']);
  t.equal(code, 2);
  t.notMatch(stdout, /===/, 'formats, which has all it needs, did not run either');
  t.same(made, []);
});

t.test('a scenario run by node names its path', async (t) => {
  const scenario = 'bench/scenarios/limits.ts';
  const { code, lines, made } = await runBare(join(bare, 'node'), ['--import', 'tsx', scenario]);
  t.same(lines, [`${scenario} needs redis-server (or REDIS_URL): apt-get install redis-server`]);
  t.equal(code, 2);
  t.same(made, []);
});

t.test('the line', async (t) => {
  const absent = (name: string, debianPackage: string) => command(`gwapi-test-no-${name}`, debianPackage);
  const npmOnly: Prerequisite = { name: 'a native part', missing: () => 'npm ci' };
  t.equal(missingPrerequisites([command('node', 'nodejs')], 'x'), undefined, 'node is on PATH');
  t.equal(
    missingPrerequisites([absent('a', 'pa'), npmOnly, absent('b', 'pb'), absent('c', 'pa')], 'x'),
    'x needs gwapi-test-no-a, a native part, gwapi-test-no-b, gwapi-test-no-c: apt-get install pa pb; npm ci',
    'one apt-get for every package, each once; the other ways after it',
  );
  const setting = 'GWAPI_TEST_PREREQUISITE_URL';
  const orServer = unlessSet(setting, absent('server', 'server'));
  t.equal(
    missingPrerequisites([orServer], 'x'),
    `x needs gwapi-test-no-server (or ${setting}): apt-get install server`,
  );
  process.env[setting] = 'redis://elsewhere';
  t.teardown(() => delete process.env[setting]);
  t.equal(missingPrerequisites([orServer], 'x'), undefined, 'not needed when the setting names a server');
});

t.test('tests skip on the same check, except in CI', async (t) => {
  const ci = process.env.CI;
  t.teardown(() => {
    if (ci === undefined) delete process.env.CI;
    else process.env.CI = ci;
  });
  delete process.env.CI;
  t.equal(
    unlessInstalled('gwapi-test-no-command', 'some-package'),
    'this test needs gwapi-test-no-command: apt-get install some-package (.ci/run does)',
  );
  t.equal(unlessInstalled(redisServer), false, 'the suite itself runs redis-server');
  process.env.CI = 'true';
  t.equal(unlessInstalled('gwapi-test-no-command', 'some-package'), false, 'CI: run, and fail');
});

t.test('every drill and benchmark scenario checks before it does anything else', async (t) => {
  const scripts = [
    ...(await readdir('drills')).map((name) => `drills/${name}`),
    ...(await readdir('bench/scenarios')).map((name) => `bench/scenarios/${name}`),
  ].filter((path) => path.endsWith('.ts'));
  t.ok(scripts.length > 12);
  for (const script of scripts) {
    const source = await readFile(script, 'utf8');
    // What follows the header comment and the imports.
    const body = source
      .replace(/^\/\*\*[\s\S]*?\*\/\s*/, '')
      .replace(/^(import [\s\S]*?from '[^']+';\s*)+/, '')
      .trimStart();
    t.match(body, /^require(Engine)?Prerequisites\(/, script);
  }
});

/**
 * The previous release's checkout (testkit/previousRelease.ts) removes the checkouts that processes
 * killed before their teardown left behind, folder and worktree, and keeps those of running processes.
 */
import { execFile, spawn } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { checkoutRelease, PREVIOUS_RELEASE } from '../../testkit/previousRelease.js';

const git = (...args: string[]) => promisify(execFile)('git', args, { encoding: 'utf8' });
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const worktrees = async () => (await git('worktree', 'list', '--porcelain')).stdout;

/** A checkout as checkoutRelease makes one, in the name of process `pid`. */
async function checkoutOf(pid: number) {
  const folder = await mkdtemp(join(tmpdir(), `gwapi-release-${pid}-`));
  const root = join(folder, 'left');
  await git('worktree', 'add', '--detach', root, PREVIOUS_RELEASE.commit);
  return { folder, root };
}

/** A process that has ended, and one that runs until the test ends. */
async function processes(t: Test) {
  const ended = spawn('true');
  await new Promise((resolve) => ended.on('exit', resolve));
  const running = spawn('sleep', ['600']);
  t.teardown(() => running.kill());
  return { ended: ended.pid!, running: running.pid! };
}

t.test('a checkout left by an ended process is removed; a running one’s is kept', async (t) => {
  const { ended, running } = await processes(t);
  const abandoned = await checkoutOf(ended);
  const kept = await checkoutOf(running);
  t.teardown(async () => {
    await git('worktree', 'remove', '--force', kept.root).catch(() => {});
    await rm(kept.folder, { recursive: true, force: true });
  });
  t.match(await worktrees(), abandoned.root, 'the abandoned checkout is a worktree');

  const checkout = await checkoutRelease();
  t.teardown(() => checkout.remove());
  t.notOk(await exists(abandoned.folder), 'its folder is gone');
  t.notMatch(await worktrees(), abandoned.root, 'and its worktree');
  t.ok(await exists(kept.root), 'the running process’s checkout is kept');
  t.match(await worktrees(), kept.root, 'with its worktree');
  t.match(checkout.root, `gwapi-release-${process.pid}-`, 'the new one is in this process’s name');
});

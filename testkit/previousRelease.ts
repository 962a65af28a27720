/**
 * The previous release, checked out of this repository's history into a git worktree of its own, to run
 * against this release's schema (expand, then contract: a release's migrations must leave the previous
 * one serving). It runs from its sources with tsx (testkit/gwapi.ts, `root`). Needs the commit in the
 * clone (a full clone, not a shallow one).
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { throwawayFolder } from './postgres.js';

const run = promisify(execFile);

/** 1.2.0, the release before the one that added sql/007. */
export const PREVIOUS_RELEASE = { version: '1.2.0', commit: '3392ad4ca1a7d6897fbc632021334f3c4ec1457a' };

/** The releases whose databases this one upgrades: each commit that published one. */
export const RELEASES = [
  PREVIOUS_RELEASE,
  { version: '1.3.0', commit: '8a78c0d8e9f87ba86e9c32f77394e9cd6a0ad1a1' },
  { version: '1.3.1', commit: 'db69bbd0ac593e6625d67fb03c304b8cba6858c3' },
] as const;

const HERE = fileURLToPath(new URL('..', import.meta.url));

/** The migrations (`sql/`) of `commit`, written into `folder`: what `migrate(sql, { dir })` reads. */
export async function releaseMigrations(commit: string, folder: string): Promise<string> {
  const git = (...args: string[]) => run('git', args, { cwd: HERE, encoding: 'utf8', maxBuffer: 1 << 24 });
  const files = (await git('ls-tree', '--name-only', `${commit}:sql`)).stdout.trim().split('\n');
  await mkdir(folder, { recursive: true });
  for (const file of files) {
    await writeFile(join(folder, file), (await git('show', `${commit}:sql/${file}`)).stdout);
  }
  return folder;
}

export interface ReleaseCheckout {
  /** The worktree's root: what `spawnGwapi`/`spawnReplica` take as `root`. */
  root: string;
  /** How its node_modules came about. */
  modules: 'shared' | 'installed';
  remove(): Promise<void>;
}

/** The checkouts' folders: `gwapi-release-PID-XXXXXX`, PID the process that made it. */
const RELEASE_FOLDER = 'gwapi-release-';

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Removes the checkouts of processes that ended without removing theirs (a test killed on its timeout
 * runs no teardown), so that neither their folders nor their worktrees pile up.
 */
async function removeAbandoned(git: (...args: string[]) => Promise<{ stdout: string }>) {
  const listed = (await git('worktree', 'list', '--porcelain')).stdout;
  for (const name of await readdir(tmpdir())) {
    const pid = new RegExp(`^${RELEASE_FOLDER}(\\d+)-`).exec(name)?.[1];
    if (pid === undefined || isRunning(Number(pid))) continue;
    const folder = join(tmpdir(), name);
    for (const [, root] of listed.matchAll(/^worktree (.*)$/gm)) {
      if (!root!.startsWith(`${folder}/`)) continue;
      await unlink(join(root!, 'node_modules')).catch(() => {});
      await git('worktree', 'remove', '--force', root!).catch(() => {});
    }
    await rm(folder, { recursive: true, force: true });
  }
  await git('worktree', 'prune');
}

/**
 * A detached worktree of `commit` in a temporary folder. Its node_modules is this checkout's when both
 * package-lock.json files are identical (a link: seconds, not an install), else its own `npm ci`.
 */
export async function checkoutRelease(commit = PREVIOUS_RELEASE.commit): Promise<ReleaseCheckout> {
  const git = (...args: string[]) => run('git', args, { cwd: HERE, encoding: 'utf8' });
  const top = (await git('rev-parse', '--show-toplevel')).stdout.trim();
  await git('cat-file', '-e', `${commit}^{commit}`).catch(() => {
    throw new Error(`commit ${commit} is not in this clone (a shallow clone? fetch the full history)`);
  });
  await removeAbandoned(git);
  const folder = await throwawayFolder(`${RELEASE_FOLDER}${process.pid}-`);
  // Git names the worktree after the folder: unique, for runs side by side.
  const root = join(folder, `${commit.slice(0, 7)}-${basename(folder).slice(-6)}`);
  const remove = async () => {
    await unlink(join(root, 'node_modules')).catch(() => {});
    await git('worktree', 'remove', '--force', root).catch(() => {});
    await rm(folder, { recursive: true, force: true });
    await git('worktree', 'prune');
  };
  try {
    await git('worktree', 'add', '--detach', root, commit);
    const [theirs, ours] = await Promise.all(
      [root, top].map((dir) => readFile(join(dir, 'package-lock.json'), 'utf8')),
    );
    if (theirs === ours) {
      await symlink(join(top, 'node_modules'), join(root, 'node_modules'), 'dir');
      return { root, modules: 'shared', remove };
    }
    await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: root });
    return { root, modules: 'installed', remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

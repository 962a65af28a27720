/** Runs a Node script, or a command a devDependency installs (its `bin`), from the repository root. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureProcess } from '../../testkit/outputCapture.js';
import type { CliResult } from './cli.js';

export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The script of `command` in the `bin` of package `name`, as npm links it into node_modules/.bin. */
function binScript(name: string, command: string): string {
  const directory = join(REPOSITORY_ROOT, 'node_modules', name);
  const { bin } = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
  return join(directory, typeof bin === 'string' ? bin : bin[command]);
}

/** `script` run by this Node; its output is kept for the suite's key scan. */
export function runNodeScript(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  captureProcess(child, [basename(script)]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export const runPackageBin = (name: string, command: string, args: string[], env?: Record<string, string>) =>
  runNodeScript(binScript(name, command), args, env);

/**
 * The repository's strict tsc over the `.ts` files of `directory` (inside the repository, so that modules
 * resolve from its node_modules): its exit code and the lines it reported.
 */
export async function typeCheckFolder(
  directory: string,
): Promise<{ code: number | null; reported: string[] }> {
  await writeFile(
    join(directory, 'tsconfig.json'),
    JSON.stringify({ extends: join(REPOSITORY_ROOT, 'tsconfig.json'), include: ['*.ts'] }),
  );
  const { code, stdout, stderr } = await runPackageBin('typescript', 'tsc', ['-p', directory]);
  return { code, reported: `${stdout}${stderr}`.split('\n').filter(Boolean) };
}

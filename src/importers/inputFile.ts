/** Opening the operator's input: a path, or `-` for standard input, with a one-line error when it fails. */
import { type FileHandle, open } from 'node:fs/promises';
import { UserError } from '../errors.js';
import { CHUNK_BYTES, fileInput, type ImportInput, streamInput } from './measurements/importInput.js';

/** How the input is named in messages (`FILE:LINE: …`). */
export const displayName = (path: string) => (path === '-' ? 'stdin' : path);

/** Fails before any database work when the file cannot be read. */
export async function openInput(path: string): Promise<ImportInput> {
  if (path === '-') return streamInput(process.stdin);
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (stat.isFile()) return fileInput(handle, stat.size);
    // A named pipe or a device (`<(zcat …)`, /dev/stdin) can be read once only, like standard input.
    // The stream owns the handle and closes it when it ends or fails.
    return streamInput(handle.createReadStream({ highWaterMark: CHUNK_BYTES }));
  } catch (error) {
    await handle?.close();
    throw new UserError(`cannot read ${path}: ${describe(error)}`);
  }
}

export function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return error instanceof Error ? error.message : String(error);
}

/** Opening the operator's input: a path, or `-` for standard input, with a one-line error when it fails. */
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { UserError } from '../errors.js';

/** How the input is named in messages (`FILE:LINE: …`). */
export const displayName = (path: string) => (path === '-' ? 'stdin' : path);

/** Fails before any database work when the file cannot be read. */
export async function openInput(path: string): Promise<Readable> {
  if (path === '-') return process.stdin;
  try {
    const handle = await open(path, 'r');
    // Large reads: fewer chunks means fewer parser calls and fewer partial lines to stitch. The stream
    // owns the handle and closes it when it ends or fails.
    return handle.createReadStream({ highWaterMark: 1 << 20 });
  } catch (error) {
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

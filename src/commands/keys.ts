import type { Settings } from '../config.js';
import { UserError } from '../errors.js';

// Placeholder until the keys commands land in this branch.
export interface CreateKeyOptions {
  name: string;
  tube: string[];
  allTubes: boolean;
}
export async function createKeyCommand(_s: Settings, _o: CreateKeyOptions): Promise<void> {
  throw new UserError('not implemented yet');
}
export async function grantKeyCommand(_s: Settings, _keyId: string, _o: { tube: string[] }): Promise<void> {
  throw new UserError('not implemented yet');
}
export async function revokeKeyCommand(_s: Settings, _keyId: string): Promise<void> {
  throw new UserError('not implemented yet');
}
export async function listKeysCommand(_s: Settings): Promise<void> {
  throw new UserError('not implemented yet');
}

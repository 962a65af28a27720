import type { Settings } from '../config.js';
import { UserError } from '../errors.js';

// Placeholder until the demo lands in this branch.
export async function demoCommand(_settings: Settings): Promise<void> {
  throw new UserError('not implemented yet');
}

import type { Settings } from '../config.js';
import { UserError } from '../errors.js';

// Placeholder until the import lands in this branch.
export async function importRegistryCommand(_settings: Settings, _file: string): Promise<void> {
  throw new UserError('import registry is not implemented yet');
}
export async function importMeasurementsCommand(_settings: Settings, _file: string): Promise<void> {
  throw new UserError('import measurements is not implemented yet');
}

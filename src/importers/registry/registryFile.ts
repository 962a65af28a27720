/** `gwapi import registry FILE`: a registry JSON file, checked with line numbers, then upserted. */
import { readFile } from 'node:fs/promises';
import type { Sql } from '../../db/connect.js';
import { UserError } from '../../errors.js';
import { ErrorCollector, ImportRejected } from '../importErrors.js';
import { describe } from '../inputFile.js';
import { parseJsonDocument } from './jsonDocument.js';
import { type RegistryCounts, RegistryRejected, upsertRegistry } from './registry.js';
import { formatPath, type RegistryIssue, type RegistryPath, type RegistryWell } from './registryTypes.js';

export async function importRegistryFile(sql: Sql, path: string): Promise<RegistryCounts> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UserError(`cannot read ${path}: ${describe(error)}`);
  }
  const document = parseJsonDocument(text);
  const errors = new ErrorCollector();
  if (!document.ok) {
    errors.add(document.line, 'JSON', document.reason);
    throw new ImportRejected(path, errors);
  }
  try {
    // upsertRegistry checks its input at run time whatever its static type says, so the parsed
    // document can go in as it is and every refusal (shape, duplicates, database clashes) comes back
    // as one kind of error with paths.
    return await upsertRegistry(sql, document.value as RegistryWell[]);
  } catch (error) {
    if (!(error instanceof RegistryRejected)) throw error;
    for (const issue of error.issues) addIssue(errors, issue, document.lineOf);
    throw new ImportRejected(path, errors);
  }
}

function addIssue(
  errors: ErrorCollector,
  issue: RegistryIssue,
  lineOf: (path: RegistryPath) => number,
): void {
  const first = issue.sameAs ? ` (first at ${formatPath(issue.sameAs)}, line ${lineOf(issue.sameAs)})` : '';
  errors.add(lineOf(issue.path), formatPath(issue.path), `${issue.reason}${first}`);
}

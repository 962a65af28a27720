/**
 * The query of the network measurements endpoint: the measurements query (from, to, aggregate, format, with
 * its interval rule) extended by `tubes` and `changedSince`. The route validates with this schema and
 * the OpenAPI document lists its parameters from it, as for the series.
 */
import { z } from 'zod';
import { EXAMPLE_TUBE_IDENTIFIER } from '../../engine/schemas.js';
import { GIVEN_TWICE, MeasurementsQuery } from '../measurementsQuery.js';

/** The most tubes one request may list; without `tubes`, every readable tube is included. */
export const MAX_LISTED_TUBES = 200;

/** What makes a list of tubes unusable, if anything: its items as sent are checked, not parsed. */
function listProblem(items: readonly string[]): string | undefined {
  if (items.includes('')) return 'holds an empty item: separate identifiers by single commas';
  if (items.length > MAX_LISTED_TUBES) {
    return `lists ${items.length} tubes: list at most ${MAX_LISTED_TUBES}, or leave it out for every tube`;
  }
  // Identifiers compare case-insensitively, so two spellings of one are a duplicate.
  const seen = new Set<string>();
  for (const item of items) {
    const key = item.toLowerCase();
    if (seen.has(key)) return `lists ${item} more than once`;
    seen.add(key);
  }
  return undefined;
}

const tubesParameter = z
  .string({
    error: (issue) =>
      Array.isArray(issue.input) ? GIVEN_TWICE : 'must be a comma-separated list of tube identifiers',
  })
  .transform((text, context): string[] => {
    const items = text.split(',');
    const problem = listProblem(items);
    if (problem === undefined) return items;
    context.addIssue({ code: 'custom', message: problem, input: text });
    return z.NEVER;
  })
  .optional()
  .meta({
    param: {
      description:
        `Comma-separated tube identifiers, at most ${MAX_LISTED_TUBES}, as listed by discovery. Without ` +
        'it, every tube this key may read. An empty item, a duplicate (identifiers compare ' +
        'case-insensitively) or more than ' +
        `${MAX_LISTED_TUBES} items is 400. An identifier this key may not read, or that does not exist, ` +
        'is 404 naming it. The response lists the tubes in discovery order whatever the order given.',
    },
    examples: [`${EXAMPLE_TUBE_IDENTIFIER},5a9e2c1d-7b3f-4e80-a1c2-d3e4f5a6b7c8`],
  });

const changedSinceParameter = z
  .string({ error: (issue) => (Array.isArray(issue.input) ? GIVEN_TWICE : 'must be a sync token') })
  .optional()
  .meta({
    param: {
      description:
        'The sync token of an earlier response of this endpoint (its `Sync-Token`): only what was ' +
        'written after that response was read, for the selected tubes in [from, to). Tubes without such ' +
        'a measurement are left out. A token this service did not issue to this key is 400; one it can ' +
        'no longer answer (the key’s view changed, or the history kept is shorter) is 410: sync again ' +
        'without it.',
    },
  });

export const NetworkQuery = MeasurementsQuery.safeExtend({
  tubes: tubesParameter,
  changedSince: changedSinceParameter,
});

export type NetworkQuery = z.output<typeof NetworkQuery>;

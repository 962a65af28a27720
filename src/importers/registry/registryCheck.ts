/**
 * The rules a registry must follow before anything is written: its shape (zod) and the uniqueness rules
 * the database would otherwise enforce one row at a time, with a message that names the field.
 */
import { z } from 'zod';
import type { RegistryIssue, RegistryPath, RegistryWell } from './registryTypes.js';

/** zod's messages, in the operator's words; a missing field says so rather than naming a type. */
const expected = (what: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is missing' : `must be ${what}`;

const text = (what: string) =>
  z
    .string({ error: expected('a string') })
    .trim()
    .min(1, `${what} must not be empty`);

/** An elevation of a tube: any finite number (JSON has no other, but 1e999 reads as Infinity). */
const elevation = z.number({ error: expected('a finite number') }).optional();

/** A coordinate in decimal degrees within ±`bound`. */
const degrees = (bound: number) =>
  z
    .number({ error: expected('a finite number') })
    .min(-bound, `must be within [-${bound}, ${bound}]`)
    .max(bound, `must be within [-${bound}, ${bound}]`);

const locationSchema = z.strictObject(
  { longitude: degrees(180), latitude: degrees(90) },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be an object') },
);

/** A tube's elevations as stored: `null` or undefined is unknown. */
interface Elevations {
  tubeTop?: number | null | undefined;
  screenTop?: number | null | undefined;
  screenBottom?: number | null | undefined;
}

/** The order of a tube's elevations, as the database checks it too (sql/008_locations.sql). */
export function elevationProblems({
  tubeTop,
  screenTop,
  screenBottom,
}: Elevations): { field: string; reason: string }[] {
  const problems: { field: string; reason: string }[] = [];
  const known = (value: number | null | undefined): value is number => value !== undefined && value !== null;
  if (!known(screenTop) && known(screenBottom)) {
    problems.push({ field: 'screenBottom', reason: 'is given without screenTop: give both or neither' });
  } else if (known(screenTop) && !known(screenBottom)) {
    problems.push({ field: 'screenTop', reason: 'is given without screenBottom: give both or neither' });
  } else if (known(screenTop) && known(screenBottom) && !(screenTop > screenBottom)) {
    problems.push({ field: 'screenTop', reason: `must be above screenBottom (${screenBottom})` });
  }
  if (known(tubeTop) && known(screenTop) && tubeTop < screenTop) {
    problems.push({ field: 'tubeTop', reason: `must not be below screenTop (${screenTop})` });
  }
  return problems;
}

function checkElevations(tube: Elevations, context: z.RefinementCtx): void {
  for (const { field, reason } of elevationProblems(tube)) {
    context.addIssue({ code: 'custom', path: [field], message: reason });
  }
}

const tubeSchema = z
  .strictObject(
    {
      // Any 8-4-4-4-12 hex UUID (not only RFC 9562 variants): identifiers come from other systems, and
      // PostgreSQL's uuid type accepts them all.
      identifier: z
        .string({ error: expected('a string') })
        .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'not a UUID')
        .transform((value) => value.toLowerCase()),
      number: text('a tube number'),
      unit: text('a unit').default('m'),
      verticalDatum: text('a vertical datum').default('NAP'),
      groundLevel: elevation,
      tubeTop: elevation,
      screenTop: elevation,
      screenBottom: elevation,
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be an object') },
  )
  .superRefine(checkElevations);

const wellSchema = z.strictObject(
  {
    name: text('a well name'),
    location: locationSchema.optional(),
    tubes: z.array(tubeSchema, { error: expected('an array of tubes') }),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be an object') },
);

const registrySchema = z.array(wellSchema, { error: 'must be an array of wells' });

/** A registry after checking: identifiers in lower case, defaults filled in, unknown values left out. */
export type CheckedRegistry = z.output<typeof registrySchema>;

export type CheckResult = { ok: true; wells: CheckedRegistry } | { ok: false; issues: RegistryIssue[] };

export function checkRegistry(value: unknown): CheckResult {
  const parsed = registrySchema.safeParse(value);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.flatMap((issue) =>
        issue.code === 'unrecognized_keys'
          ? issue.keys.map((key) => ({
              path: [...(issue.path as RegistryPath), key],
              reason: 'unknown field',
            }))
          : [{ path: issue.path as RegistryPath, reason: issue.message }],
      ),
    };
  }
  const issues = findDuplicates(parsed.data);
  return issues.length === 0 ? { ok: true, wells: parsed.data } : { ok: false, issues };
}

/** Duplicate well names, tube identifiers and tube numbers within a well; each names its first use. */
function findDuplicates(wells: readonly RegistryWell[]): RegistryIssue[] {
  const issues: RegistryIssue[] = [];
  const wellNames = new Map<string, RegistryPath>();
  const identifiers = new Map<string, RegistryPath>();
  wells.forEach((well, w) => {
    const namePath = [w, 'name'];
    const firstName = wellNames.get(well.name);
    if (firstName)
      issues.push({ path: namePath, reason: `duplicate well name "${well.name}"`, sameAs: firstName });
    else wellNames.set(well.name, namePath);
    const numbers = new Map<string, RegistryPath>();
    well.tubes.forEach((tube, i) => {
      const identifierPath = [w, 'tubes', i, 'identifier'];
      const firstIdentifier = identifiers.get(tube.identifier);
      if (firstIdentifier) {
        issues.push({ path: identifierPath, reason: 'duplicate tube identifier', sameAs: firstIdentifier });
      } else identifiers.set(tube.identifier, identifierPath);
      const numberPath = [w, 'tubes', i, 'number'];
      const firstNumber = numbers.get(tube.number);
      if (firstNumber) {
        issues.push({
          path: numberPath,
          reason: `duplicate tube number "${tube.number}" in well "${well.name}"`,
          sameAs: firstNumber,
        });
      } else numbers.set(tube.number, numberPath);
    });
  });
  return issues;
}

/**
 * The tubes a response of many tubes holds (the network, the latest): the `tubes` parameter as a client
 * sends it, the tubes of the key's view in discovery's order, the 404 that names a listed tube the
 * key may not read, and the tubes of the wells inside a box (`bbox`). Shared here so that every such
 * endpoint refuses, orders and selects alike.
 */
import { z } from 'zod';
import type { Queryable } from '../db/connect.js';
import { groupWells } from '../domain/discoveryOrder.js';
import type { TubeRow } from '../engine/read/tubes.js';
import { canonicalTubeIdentifier, EXAMPLE_TUBE_IDENTIFIER } from '../engine/schemas.js';
import { ProblemError } from '../http/problems/problems.js';
import type { Client } from '../keys/clients.js';
import { type Bbox, containsLocation } from './bbox.js';
import { GIVEN_TWICE } from './measurementsQuery.js';

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

/** `tubes`: the identifiers as sent, or undefined for every tube the key may read. */
export const tubesParameter = z
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

/**
 * A listed tube that is unknown, hidden or malformed: one answer for all three, naming the identifier
 * as it was sent (quoted as JSON writes a string, so that any text stays readable and unambiguous).
 */
export const listedTubeNotFound = (sent: string) =>
  new ProblemError(
    404,
    `There is no tube with the identifier ${JSON.stringify(sent)} that this API key may read.`,
  );

export interface TubeInView extends TubeRow {
  /** Canonical (lower-case) identifier. */
  identifier: string;
  number: string;
  wellName: string;
  /** When the well's name last changed (sql/005): it moves the tube in the order. */
  wellChangedAt: Date;
  wellId: number;
  /** The well's location (sql/008), null when unknown. */
  longitude: number | null;
  latitude: number | null;
  /** When the well's location last changed, null if it never did. */
  locationChangedAt: Date | null;
  /** The tube's elevations as the operator stated them, null when unknown. */
  groundLevel: number | null;
  tubeTop: number | null;
  screenTop: number | null;
  screenBottom: number | null;
}

/**
 * The tubes the client may read, or of those the ones `listed` (canonical identifiers), in the order of
 * discovery: wells by name, tubes by number, both natural. Ordered by discovery's own grouping, so the
 * two cannot disagree. Hidden tubes never leave the database.
 */
export async function tubesInView(
  sql: Queryable,
  client: Client,
  listed: readonly string[] | undefined,
): Promise<TubeInView[]> {
  const rows = await sql<TubeInView[]>`
    select t.id, t.identifier::text as identifier, t.number, t.unit, t.vertical_datum as "verticalDatum",
           t.series_version::text as "seriesVersion", t.series_changed_at as "seriesChangedAt",
           w.name as "wellName", w.changed_at as "wellChangedAt", w.id as "wellId",
           w.longitude, w.latitude, w.location_changed_at as "locationChangedAt",
           t.ground_level as "groundLevel", t.tube_top as "tubeTop",
           t.screen_top as "screenTop", t.screen_bottom as "screenBottom"
    from tubes t join wells w on w.id = t.well_id
    where (${client.allTubes} or t.id = any(${[...client.grants]}::int[]))
      ${listed === undefined ? sql`` : sql`and t.identifier = any(${listed as string[]}::uuid[])`}`;
  return groupWells(rows).flatMap((well) => well.tubes);
}

/**
 * The response's tubes: every tube of the key's view, or the listed ones (as sent), each of which it
 * must be able to read; a 404 names the first it may not (malformed, unknown and hidden alike).
 */
export async function selectTubes(
  tx: Queryable,
  client: Client,
  listed: readonly string[] | undefined,
): Promise<TubeInView[]> {
  const canonical = listed?.map(canonicalTubeIdentifier);
  const wellFormed = canonical?.filter((identifier): identifier is string => identifier !== undefined);
  const tubes = await tubesInView(tx, client, wellFormed);
  return listed ? pickListed(tubes, listed) : tubes;
}

/**
 * Of `view` (tubes of a key's view, in discovery's order), the `listed` ones (as sent), in the view's
 * order; a 404 names the first the key may not read (malformed, unknown and hidden alike).
 */
export function pickListed(view: readonly TubeInView[], listed: readonly string[]): TubeInView[] {
  const canonical = listed.map(canonicalTubeIdentifier);
  const wanted = new Set(canonical);
  const picked = view.filter((tube) => wanted.has(tube.identifier));
  const found = new Set(picked.map((tube) => tube.identifier));
  const missing = canonical.findIndex((identifier) => identifier === undefined || !found.has(identifier));
  if (missing !== -1) throw listedTubeNotFound(listed[missing]!);
  return picked;
}

export interface TubeSelection {
  /** The response's tubes, in discovery's order. */
  tubes: TubeInView[];
  /** Every tube the request could select, inside the box or not (the tubes alone without a box). */
  candidates: TubeInView[];
  /**
   * With a box: the latest location change among the candidates' wells, inside the box or not: a well
   * that left the box took its tubes out of the response, which its own tubes' times cannot tell.
   */
  locationsChangedAt: Date | undefined;
}

/**
 * The response's tubes as selectTubes finds them, then, with a box, only those of the wells whose
 * location lies inside it (edges included; a well without a location never does). A listed tube outside
 * the box is left out, not refused: both parameters apply. A box that holds none of them is an empty
 * selection, a document of no tube, like a key's view with nothing in it.
 */
export async function selectTubesInBox(
  tx: Queryable,
  client: Client,
  listed: readonly string[] | undefined,
  bbox: Bbox | undefined,
): Promise<TubeSelection> {
  return inBox(await selectTubes(tx, client, listed), bbox);
}

/** Of `candidates`, with a box, those of the wells inside it (selectTubesInBox). */
export function inBox(candidates: TubeInView[], bbox: Bbox | undefined): TubeSelection {
  if (bbox === undefined) return { tubes: candidates, candidates, locationsChangedAt: undefined };
  let locationsChangedAt = new Date(0);
  for (const { locationChangedAt } of candidates) {
    if (locationChangedAt !== null && locationChangedAt > locationsChangedAt)
      locationsChangedAt = locationChangedAt;
  }
  return {
    tubes: candidates.filter((tube) => containsLocation(bbox, tube.longitude, tube.latitude)),
    candidates,
    locationsChangedAt,
  };
}

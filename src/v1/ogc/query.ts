/**
 * The query of `/v1/ogc` items, by OGC API - Features' rules rather than the rest of `/v1`'s: any
 * parameter a collection does not know is 400, `limit` above its maximum is served as the maximum, and
 * `datetime` is an instant or an interval with both ends inclusive. Each collection's schema is built
 * here from its own parameters, so a route validates with it and the OpenAPI document lists it.
 */
import { z } from 'zod';
import type { ZodOpenApiOverrideMetaContext } from 'zod-openapi';
import { formatInstant, type Instant, parseDateTime } from '../../domain/datetime.js';
import { bboxParameter } from '../bbox.js';
import { GIVEN_TWICE, parsedBy, statusParameter } from '../measurementsQuery.js';
import { tubesParameter } from '../tubesInView.js';

export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';

/** The collections and their limits: one feature per tube for two of them, so a smaller maximum. */
export const COLLECTION_IDS = ['tubes', 'latest', 'measurements'] as const;
export type CollectionId = (typeof COLLECTION_IDS)[number];
export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT: Record<CollectionId, number> = {
  tubes: 10_000,
  latest: 10_000,
  measurements: 50_000,
};

/** Both ends inclusive; undefined for an open end. */
export interface Period {
  from: Instant | undefined;
  to: Instant | undefined;
}

/** The period `text` stands for (an instant, or `start/end` with `..` or nothing for an open end). */
export function parsePeriod(text: string): { ok: true; period: Period } | { ok: false; reason: string } {
  const ends = text.split('/');
  if (ends.length > 2) return { ok: false, reason: 'must be an RFC 3339 date-time or an interval start/end' };
  const read = (end: string): { ok: true; instant: Instant | undefined } | { ok: false; reason: string } => {
    if (ends.length === 2 && (end === '..' || end === '')) return { ok: true, instant: undefined };
    return parseDateTime(end);
  };
  const from = read(ends[0]!);
  if (!from.ok) return { ok: false, reason: from.reason };
  const to = read(ends.at(-1)!);
  if (!to.ok) return { ok: false, reason: to.reason };
  if (from.instant === undefined && to.instant === undefined) {
    return { ok: false, reason: 'is open at both ends: give at least one end' };
  }
  if (from.instant && to.instant && formatInstant(from.instant) !== formatInstant(to.instant)) {
    const { seconds: a, micros: b } = from.instant;
    const { seconds: c, micros: d } = to.instant;
    if (a > c || (a === c && b > d)) return { ok: false, reason: 'starts after it ends' };
  }
  return { ok: true, period: { from: from.instant, to: to.instant } };
}

const once = (message: string) => (issue: { input: unknown }) =>
  Array.isArray(issue.input) ? GIVEN_TWICE : message;

const datetimeParameter = z
  .string({ error: once('must be an RFC 3339 date-time or an interval start/end') })
  .transform(parsedBy(parsePeriod, 'period'))
  .optional()
  .meta({
    param: {
      description:
        'Only features whose `observedAt` lies in this period: an RFC 3339 date-time with offset (that ' +
        'instant), or an interval `start/end` with both ends included, `..` (or nothing) for an open ' +
        'end. `../..` is 400.',
    },
    examples: ['2024-01-01T00:00:00Z/2024-02-01T00:00:00Z', '2024-01-01T00:00:00Z/..'],
  });

/**
 * A page size up to `maximum`. The one of the tube collections is also the document's shared
 * `components.parameters.limit`: QGIS reads a server's page sizes there only, and pages by 100 without it.
 */
const pageSize = (maximum: number, shared: boolean) =>
  z
    .string({ error: once('must be a whole number from 1') })
    .regex(/^\d+$/, 'must be a whole number from 1')
    .transform(Number)
    .refine((limit) => limit >= 1, 'must be a whole number from 1')
    .transform((limit) => Math.min(limit, maximum))
    .optional()
    .meta({
      param: {
        ...(shared ? { id: 'limit' } : {}),
        description:
          `The most features in a page; more than ${maximum.toLocaleString('en-US')} is served ` +
          'as that many. 0, a negative or a fractional number is 400.',
      },
      // Where QGIS reads a collection's page sizes: a whole number with its default and maximum.
      override: ({ jsonSchema }: ZodOpenApiOverrideMetaContext) => {
        for (const name of Object.keys(jsonSchema)) delete jsonSchema[name as keyof typeof jsonSchema];
        Object.assign(jsonSchema, { type: 'integer', minimum: 1, maximum, default: DEFAULT_LIMIT });
      },
    });

/** One schema per maximum: tubes and latest share theirs, which the document names once. */
const TUBES_PAGE_SIZE = pageSize(MAX_LIMIT.tubes, true);
const limitParameter = (collection: CollectionId) =>
  MAX_LIMIT[collection] === MAX_LIMIT.tubes ? TUBES_PAGE_SIZE : pageSize(MAX_LIMIT[collection], false);

const crsParameter = z
  .literal(CRS84, { error: once(`must be ${CRS84}, the only CRS served`) })
  .optional()
  .meta({
    param: { description: `Must be \`${CRS84}\` (longitude, latitude in WGS 84): the only CRS served.` },
  });

/** The parameters every collection's items take. */
const common = (collection: CollectionId) => ({
  limit: limitParameter(collection),
  bbox: bboxParameter,
  'bbox-crs': crsParameter,
  crs: crsParameter,
  skipGeometry: z
    .enum(['true', 'false'], { error: once('must be true or false') })
    .transform((value) => value === 'true')
    .optional()
    .meta({ param: { description: '`true` sets every geometry to `null` and leaves coordinates out.' } }),
  f: z
    .enum(['json', 'geojson'], { error: once('must be json or geojson') })
    .optional()
    .meta({ param: { description: 'The format: GeoJSON either way (`json` is sent as application/json).' } }),
  cursor: z
    .string({ error: once('must be the cursor of a next link') })
    .optional()
    .meta({
      param: { description: 'Where the page starts: as a `next` link gives it, never written by hand.' },
    }),
  api_key: z
    .string({ error: once('must be given at most once') })
    .optional()
    .meta({
      param: {
        description:
          'The API key, for clients that cannot send the X-API-Key header (QGIS). Prefer the header: ' +
          'proxies and histories keep URLs. Both given must be the same key, else 400.',
      },
    }),
});

/** A strict query: a parameter not in `shape` is 400 naming it (OGC's rule). */
function strictQuery<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = new Set(Object.keys(shape));
  return z.looseObject(shape).superRefine((query, context) => {
    for (const name of Object.keys(query)) {
      if (!known.has(name)) {
        context.addIssue({
          code: 'custom',
          path: [name],
          message: `is not a parameter of this collection: give only ${[...known].join(', ')}`,
        });
      }
    }
  });
}

export const TubesItemsQuery = strictQuery(common('tubes'));
export const LatestItemsQuery = strictQuery({
  ...common('latest'),
  datetime: datetimeParameter,
  status: statusParameter,
});
export const MeasurementsItemsQuery = strictQuery({
  ...common('measurements'),
  datetime: datetimeParameter,
  status: statusParameter,
  tubeIdentifier: tubesParameter,
});
/** What a single feature takes: only the format and the key. */
export const FeatureQuery = strictQuery({ f: common('tubes').f, api_key: common('tubes').api_key });
/** What the landing page, the conformance and the collections take. */
export const MetadataQuery = FeatureQuery;

export type ItemsQuery = z.output<typeof MeasurementsItemsQuery>;

export const ITEMS_QUERIES = {
  tubes: TubesItemsQuery,
  latest: LatestItemsQuery,
  measurements: MeasurementsItemsQuery,
} as const;

/** Parameters that are not a filter: a cursor stays valid whatever they are. */
const NOT_FILTERS = new Set(['limit', 'cursor', 'api_key', 'f']);

/** What a cursor is bound to besides its key: the collection and every filter as validated. */
export function filterBinding(collection: CollectionId, query: Record<string, unknown>): string {
  const filters = Object.entries(query)
    .filter(([name, value]) => !NOT_FILTERS.has(name) && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([collection, filters]);
}

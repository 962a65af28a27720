/**
 * `/v1/ogc`: the data of `/v1` as an OGC API - Features service (Part 1: core, GeoJSON, OAS 3.0), for
 * the GIS clients that read any such service with no code of the user's own. The landing page and the
 * conformance are public, like the OpenAPI document; the collections and their features need a key,
 * given as the header or as `api_key` (ogcDataRoutes), and show only what it may read.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_VERSION, V1_PREFIX } from '../../contract.js';
import type { Queryable } from '../../db/connect.js';
import type { ReadSources } from '../../db/readReplicas/readSources.js';
import { begin } from '../../db/transaction.js';
import { formatInstant, instantOfMicros } from '../../domain/datetime.js';
import { canonicalTubeIdentifier, STATUSES } from '../../engine/schemas.js';
import { featurePageWriter, type PageEnd } from '../../engine/write/featurePage.js';
import type { LatestWriter, MediaFormat } from '../../engine/write/writer.js';
import { BudgetCache } from '../../http/budgetCache.js';
import { clientGoneSignal } from '../../http/clientGone.js';
import { entityTag } from '../../http/conditional.js';
import { API_KEY_PARAMETER, presentedKey } from '../../http/hooks/authenticate.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden, invalidParameter, ProblemError } from '../../http/problems/problems.js';
import { type ResponsePlan, type StreamDependencies, sendDocument } from '../../http/streamedResponse.js';
import { type Client, grantsCacheKey, readsNothing } from '../../keys/clients.js';
import {
  databaseState,
  KeyViews,
  latestTube,
  registryVersion,
  type SeriesState,
  seriesState,
} from '../keyViews.js';
import { type TubeInView, tubesInView } from '../tubesInView.js';
import { readCursor, writeCursor } from './cursor.js';
import {
  type Feature,
  latestFeature,
  latestPage,
  latestRowsOf,
  measurementAt,
  measurementPosition,
  measurementsMatched,
  measurementsPageParts,
  measurementsPageSelect,
  measurementsStart,
  type Position,
  queriedTubes,
  tubeFeature,
  tubesPage,
  type WrittenLatest,
} from './features.js';
import {
  COLLECTION_IDS,
  type CollectionId,
  CRS84,
  DEFAULT_LIMIT,
  FeatureQuery,
  filterBinding,
  ITEMS_QUERIES,
  type ItemsQuery,
  MetadataQuery,
} from './query.js';

export const OGC_URL = '/ogc';

const GEOJSON = 'application/geo+json';
const JSON_TYPE = 'application/json';
/** OWSLib compares it as a string. */
export const OPENAPI_LINK_TYPE = 'application/vnd.oai.openapi+json;version=3.0';
const GREGORIAN = 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian';

export const CONFORMANCE = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30',
];

export const COLLECTIONS: Record<CollectionId, { title: string; description: string }> = {
  tubes: {
    title: 'Tubes',
    description: 'Every tube this key may read, at its well, with its elevations.',
  },
  latest: {
    title: 'Latest measurements',
    description: 'The latest measurement of each tube this key may read that has one.',
  },
  measurements: {
    title: 'Measurements',
    description: 'Every measurement of the tubes this key may read, by tube (in discovery order), then time.',
  },
};

export const CONFORMANCE_URL = `${OGC_URL}/conformance`;
/** The OpenAPI document in 3.0 (the `oas30` class): the `service-desc`, where OGC servers commonly serve it. */
export const OGC_OPENAPI_URL = `${OGC_URL}/api`;
export const COLLECTIONS_URL = `${OGC_URL}/collections`;
export const COLLECTION_URL = `${COLLECTIONS_URL}/:collectionId`;
export const itemsUrl = (id: CollectionId) => `${COLLECTIONS_URL}/${id}/items`;

/** The service's own absolute URL of `path` (under /v1/ogc), as the client reached it. */
const urlOf = (request: FastifyRequest, path: string) =>
  `${request.protocol}://${request.host}${V1_PREFIX}${OGC_URL}${path}`;

/**
 * `path` with the request's query as sent, but never `api_key` (a key is never written into a link:
 * clients that give it in the URL add it to every request themselves) and with `changes` applied.
 */
function linkOf(request: FastifyRequest, path: string, changes: Record<string, string> = {}): string {
  const sent = new URLSearchParams(request.url.split('?')[1] ?? '');
  const query = new URLSearchParams();
  for (const [name, value] of sent) {
    if (name !== API_KEY_PARAMETER && !(name in changes)) query.append(name, value);
  }
  for (const [name, value] of Object.entries(changes)) query.append(name, value);
  const text = query.toString();
  return urlOf(request, path) + (text === '' ? '' : `?${text}`);
}

const sendJson = (reply: FastifyReply, type: string, body: unknown) =>
  reply.type(type).send(JSON.stringify(body));

const collectionNotFound = (id: string) =>
  new ProblemError(
    404,
    `There is no collection ${JSON.stringify(id)}: the collections are ${COLLECTION_IDS.join(', ')}.`,
  );

const featureNotFound = () =>
  new ProblemError(404, 'There is no feature with this identifier that this API key may read.');

const isCollection = (id: string): id is CollectionId => (COLLECTION_IDS as readonly string[]).includes(id);

/** `https://host/v1`: where the client reached this service. */
const baseOf = (request: FastifyRequest) => `${request.protocol}://${request.host}${V1_PREFIX}`;

/** The landing page of the service at `base` (`https://host/v1`). */
export const landingPage = (base: string) => ({
  title: 'Groundwater levels',
  description: 'Groundwater monitoring tubes, their latest measurements and every measurement.',
  links: [
    { rel: 'self', type: JSON_TYPE, title: 'This document', href: `${base}${OGC_URL}` },
    {
      rel: 'service-desc',
      type: OPENAPI_LINK_TYPE,
      title: 'The OpenAPI document',
      href: `${base}${OGC_OPENAPI_URL}`,
    },
    { rel: 'conformance', type: JSON_TYPE, title: 'Conformance', href: `${base}${OGC_URL}/conformance` },
    { rel: 'data', type: JSON_TYPE, title: 'Collections', href: `${base}${OGC_URL}/collections` },
  ],
});

export const conformance = () => ({ conformsTo: CONFORMANCE });

/** The landing page and the conformance: public, like the OpenAPI document they point to. */
export async function ogcPublicRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const landing = (request: FastifyRequest, reply: FastifyReply) =>
    sendJson(reply, JSON_TYPE, landingPage(baseOf(request)));
  for (const url of [OGC_URL, `${OGC_URL}/`]) {
    api.route({ method: READ_METHODS, url, schema: { querystring: MetadataQuery }, handler: landing });
  }
  api.route({
    method: READ_METHODS,
    url: CONFORMANCE_URL,
    schema: { querystring: MetadataQuery },
    handler: (_request, reply) => sendJson(reply, JSON_TYPE, conformance()),
  });
}

/** Reads `work` in one read-only snapshot of a read source, through its gate. */
function inSnapshot<T>(
  reads: ReadSources,
  reply: FastifyReply,
  work: (tx: Parameters<Parameters<typeof begin>[1]>[0]) => Promise<T>,
) {
  const signal = clientGoneSignal(reply);
  return reads.read(({ sql, gate }) => gate.run(() => begin(sql, work, { snapshot: true }), signal, 'ogc'));
}

/** The extent of a collection's features for the key: their box, and for timed ones their first and last time. */
async function extentOf(
  tx: Parameters<Parameters<typeof begin>[1]>[0],
  id: CollectionId,
  tubes: readonly TubeInView[],
): Promise<object | undefined> {
  let located = tubes;
  let interval: [string, string] | undefined;
  if (id === 'latest') {
    const latest = await latestRowsOf(tx, tubes, {});
    located = latest.map(({ tube }) => tube);
    const times = latest
      .map(({ tube, row }) => latestFeature(tube, row).properties.observedAt as string)
      .sort();
    if (times.length > 0) interval = [times[0]!, times.at(-1)!];
  } else if (id === 'measurements') {
    const ids = tubes.map((tube) => tube.id);
    const [bounds] = await tx<
      {
        firstSeconds: number | null;
        firstMicros: number | null;
        lastSeconds: number | null;
        lastMicros: number | null;
      }[]
    >`
      with ends as (
        -- The first day from the rollups, so that only that day's rows are read, not every tube's all.
        select (select min(observed_at) from measurements
                where tube_id = any(${ids}::int4[])
                  and observed_at >= (select min(day) from measurement_day_rollups where tube_id = any(${ids}::int4[]))
                  and observed_at < (select min(day) from measurement_day_rollups where tube_id = any(${ids}::int4[]))
                                    + interval '1 day') as first,
               (select max(observed_at) from latest_measurements where tube_id = any(${ids}::int4[])) as last)
      select floor(extract(epoch from first))::float8 as "firstSeconds",
             (extract(microseconds from first)::int8 % 1000000)::int4 as "firstMicros",
             floor(extract(epoch from last))::float8 as "lastSeconds",
             (extract(microseconds from last)::int8 % 1000000)::int4 as "lastMicros"
      from ends`;
    if (bounds!.firstSeconds !== null && bounds!.lastSeconds !== null) {
      interval = [
        formatInstant({ seconds: bounds!.firstSeconds, micros: bounds!.firstMicros! }),
        formatInstant({ seconds: bounds!.lastSeconds, micros: bounds!.lastMicros! }),
      ];
      const withRows = new Set(
        (
          await tx<
            { id: number }[]
          >`select distinct tube_id as id from latest_measurements where tube_id = any(${ids}::int4[])`
        ).map(({ id: tube }) => tube),
      );
      located = tubes.filter((tube) => withRows.has(tube.id));
    } else located = [];
  }
  const points = located.filter((tube) => tube.longitude !== null && tube.latitude !== null);
  if (points.length === 0 && interval === undefined) return undefined;
  const extent: Record<string, object> = {};
  if (points.length > 0) {
    const longitudes = points.map((tube) => tube.longitude!);
    const latitudes = points.map((tube) => tube.latitude!);
    extent.spatial = {
      bbox: [
        [Math.min(...longitudes), Math.min(...latitudes), Math.max(...longitudes), Math.max(...latitudes)],
      ],
      crs: CRS84,
    };
  }
  if (interval !== undefined) extent.temporal = { interval: [interval], trs: GREGORIAN };
  return extent;
}

/** A collection's description, at `base` (`https://host/v1`), with its extent for the key if it has features. */
export function collectionOf(base: string, id: CollectionId, extent: object | undefined) {
  const { title, description } = COLLECTIONS[id];
  const href = (path: string) => `${base}${OGC_URL}${path}`;
  return {
    id,
    title,
    description,
    itemType: 'feature',
    crs: [CRS84],
    ...(extent === undefined ? {} : { extent }),
    links: [
      { rel: 'self', type: JSON_TYPE, title, href: href(`/collections/${id}`) },
      { rel: 'items', type: GEOJSON, title, href: href(`/collections/${id}/items`) },
    ],
  };
}

export interface Link {
  rel: string;
  type: string;
  title?: string;
  href: string;
}

/** What a page holds after its features, without braces: written after them, once they are known. */
const membersAfterFeatures = (numberMatched: number, numberReturned: number, links: Link[]) =>
  `"numberMatched":${numberMatched},"numberReturned":${numberReturned},` +
  `"timeStamp":${JSON.stringify(new Date().toISOString())},"links":${JSON.stringify(links)}`;

const COLLECTION_OPENING = Buffer.from('{"type":"FeatureCollection","features":[');

/** A page of features as OGC API - Features writes it, from its features' JSON, comma-separated. */
export const featureCollection = (features: Buffer, returned: number, numberMatched: number, links: Link[]) =>
  Buffer.concat([
    COLLECTION_OPENING,
    features,
    Buffer.from(`],${membersAfterFeatures(numberMatched, returned, links)}}`),
  ]);

/** Bytes of latest features kept at most, over every key. */
const KEPT_LATEST_BYTES = 32 * 1024 * 1024;
/** Bytes of first pages kept at most, over every key. */
const KEPT_PAGE_BYTES = 32 * 1024 * 1024;

/** A page of `tubes` or `latest` as sent, and how many features it holds. */
interface KeptPage {
  body: Buffer;
  returned: number;
}

/** The two media types of a page: GeoJSON, or JSON for `f=json`; the same bytes. */
const PAGE_FORMATS: readonly MediaFormat<'geojson' | 'json'>[] = [
  { name: 'geojson', mediaType: GEOJSON, extension: undefined },
  { name: 'json', mediaType: JSON_TYPE, extension: undefined },
];

/** The latest change of what a page of measurements derives from: its tubes' series and wells, the key's grants. */
function lastChangeOf(tubes: readonly TubeInView[], client: Client, series: SeriesState): Date {
  let latest = client.accessChangedAt ?? new Date(0);
  if (series.changedAt !== null && series.changedAt > latest) latest = series.changedAt;
  for (const { wellChangedAt, locationChangedAt } of tubes) {
    if (wellChangedAt > latest) latest = wellChangedAt;
    if (locationChangedAt !== null && locationChangedAt > latest) latest = locationChangedAt;
  }
  return latest;
}

/** The position a cursor holds, or the 400 of one that is not this key's for this filter. */
function positionOf(key: string, binding: string, cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return undefined;
  const position = readCursor(key, binding, cursor);
  const valid =
    position !== undefined &&
    (position.length === 3 || position.length === 5) &&
    position.slice(0, 3).every((part) => typeof part === 'string') &&
    position.slice(3).every((part) => Number.isInteger(part));
  if (!valid) {
    throw invalidParameter(
      'cursor',
      'is not a cursor of this collection for this API key and these filters: follow the next link as given, or start again without it',
    );
  }
  return position as Position;
}

/** A measurement's feature id, `{tubeIdentifier}:{observedAt}`, split; undefined when it is none. */
function measurementId(featureId: string): { tube: string; observedAt: string } | undefined {
  const colon = featureId.indexOf(':');
  if (colon === -1) return undefined;
  const tube = canonicalTubeIdentifier(featureId.slice(0, colon));
  return tube === undefined ? undefined : { tube, observedAt: featureId.slice(colon + 1) };
}

export async function ogcDataRoutes(app: FastifyInstance, options: StreamDependencies): Promise<void> {
  const { reads } = options;
  const views = new KeyViews();
  /** The latest features of whole views, per snapshot: bytes at most. */
  const keptLatest = new BudgetCache<WrittenLatest>(KEPT_LATEST_BYTES);
  /** First pages of whole views, their bodies as sent: bytes at most. */
  const keptPages = new BudgetCache<KeptPage>(KEPT_PAGE_BYTES);
  /** The tubes of the key's view, as of the snapshot of `tx`: kept per registry version and grants. */
  const viewOf = async (tx: Parameters<Parameters<typeof begin>[1]>[0], client: Client) =>
    (await views.view(tx, client, await registryVersion(tx))).tubes;
  const api = app.withTypeProvider<ZodTypeProvider>();

  /**
   * A page of measurements: a document of the engine (its select, its binary COPY, the GeoJSON writer
   * of features), streamed from one snapshot, with validators. Its count and links follow its features,
   * written once the page's end is known (decisions/0121).
   */
  function sendMeasurements(
    request: FastifyRequest,
    reply: FastifyReply,
    page: {
      client: Client;
      query: ItemsQuery;
      position: Position | undefined;
      limit: number;
      self: Link;
      linksOf(last: Position | undefined): Link[];
    },
  ) {
    const { client, query, position, limit, self, linksOf } = page;
    let members = (_end: PageEnd): string => {
      throw new Error('a page closed before its plan');
    };
    const { from, to } = query.datetime ?? {};
    return sendDocument<ResponsePlan, LatestWriter, MediaFormat<'geojson' | 'json'>>(
      request,
      reply,
      options,
      {
        kind: 'ogc',
        offered: PAGE_FORMATS,
        format: query.f === 'json' ? 'json' : 'geojson',
        writer: () =>
          featurePageWriter({
            limit,
            skipGeometry: query.skipGeometry === true,
            statuses: STATUSES,
            members: (end) => members(end),
          }),
        interval: {
          from: from ? formatInstant(from) : '-infinity',
          to: to ? formatInstant(to) : 'infinity',
        },
        async plan(_source, tx, { writer, format, coding }) {
          const version = await registryVersion(tx);
          const view = await views.view(tx, client, version);
          const tubes = queriedTubes(view.tubes, query);
          const { start, after } = measurementsStart(tubes, position);
          const [matched, series, parts] = await Promise.all([
            measurementsMatched(tx, tubes, query),
            seriesState(tx, tubes),
            measurementsPageParts(tx, tubes, start, after, query, limit),
          ]);
          members = ({ returned, last, more }) =>
            membersAfterFeatures(
              matched,
              returned,
              linksOf(
                more && last
                  ? measurementPosition(tubes[last.tube]!, instantOfMicros(last.observedAt))
                  : undefined,
              ),
            );
          return {
            // Weak: the page's timeStamp differs from response to response. The self link holds the
            // host, every filter, the cursor and the limit.
            validators: {
              etag: `W/${entityTag([API_VERSION, 'ogc', version, grantsCacheKey(client), series.versions, self.href, format.name, coding])}`,
              lastModified: lastChangeOf(tubes, client, series),
            },
            document: {
              // The view's own list when it is whole, so the writer's pieces of it are made once.
              opening: writer.open(tubes === view.tubes ? view.latestTubes : tubes.map(latestTube)),
              tubes: [],
              everyTube: false,
              select: measurementsPageSelect(tubes, start, after, query, limit, parts),
              shape: 'rawWithStatus',
            },
          };
        },
        notFound: () => new Error('a page of measurements found nothing to write'),
        file: { stem: 'groundwater-measurements' },
      },
    );
  }

  const clientOf = (request: FastifyRequest): Client => {
    const client = request.client!;
    if (readsNothing(client)) throw forbidden();
    return client;
  };

  api.route({
    method: READ_METHODS,
    url: COLLECTIONS_URL,
    schema: { querystring: MetadataQuery },
    handler: async (request, reply) => {
      const client = clientOf(request);
      const collections = await inSnapshot(reads, reply, async (tx) => {
        const tubes = await viewOf(tx, client);
        return Promise.all(
          COLLECTION_IDS.map(async (id) => collectionOf(baseOf(request), id, await extentOf(tx, id, tubes))),
        );
      });
      return sendJson(reply, JSON_TYPE, {
        links: [{ rel: 'self', type: JSON_TYPE, href: urlOf(request, '/collections') }],
        collections,
      });
    },
  });

  api.route({
    method: READ_METHODS,
    url: COLLECTION_URL,
    schema: { querystring: MetadataQuery, params: z.object({ collectionId: z.string() }) },
    handler: async (request, reply) => {
      const { collectionId } = request.params;
      if (!isCollection(collectionId)) throw collectionNotFound(collectionId);
      const client = clientOf(request);
      const extent = await inSnapshot(reads, reply, async (tx) =>
        extentOf(tx, collectionId, await viewOf(tx, client)),
      );
      return sendJson(reply, JSON_TYPE, collectionOf(baseOf(request), collectionId, extent));
    },
  });

  api.route({
    method: READ_METHODS,
    url: `${OGC_URL}/collections/:collectionId/items`,
    schema: { params: z.object({ collectionId: z.string() }) },
    handler: async (request, reply) => {
      const { collectionId } = request.params;
      if (!isCollection(collectionId)) throw collectionNotFound(collectionId);
      const client = clientOf(request);
      const parsed = ITEMS_QUERIES[collectionId].safeParse(request.query);
      if (!parsed.success) {
        const errors: Record<string, string[]> = {};
        for (const issue of parsed.error.issues) {
          const name = String(issue.path[0] ?? '');
          errors[name] = [...(errors[name] ?? []), issue.message];
        }
        throw new ProblemError(400, 'The query parameters are not valid: see errors.', {}, errors);
      }
      const query = parsed.data as ItemsQuery;
      const limit = query.limit ?? DEFAULT_LIMIT;
      const binding = filterBinding(collectionId, query);
      const key = presentedKey(request, true)!;
      const position = positionOf(key, binding, query.cursor);
      const path = `/collections/${collectionId}/items`;
      const self: Link = { rel: 'self', type: GEOJSON, title: 'This page', href: linkOf(request, path) };
      /** The page's links: `self`, and `next` after `last` when more features follow. */
      const linksOf = (last: Position | undefined): Link[] =>
        last === undefined
          ? [self]
          : [
              self,
              {
                rel: 'next',
                type: GEOJSON,
                title: 'The next page',
                href: linkOf(request, path, { cursor: writeCursor(key, binding, last) }),
              },
            ];
      if (collectionId === 'measurements') {
        return sendMeasurements(request, reply, { client, query, position, limit, self, linksOf });
      }
      // Only latest needs the snapshot; a page of tubes is of the registry version alone.
      const stateOf = async (sql: Queryable) =>
        collectionId === 'tubes'
          ? { registryVersion: await registryVersion(sql), snapshot: '' }
          : await databaseState(sql);
      // The first page of a whole view, kept whole: of the view (tubes) or the snapshot (latest), and
      // of everything its links hold (the self link's host and query, the key the next cursor is for).
      const keptWhole =
        position === undefined &&
        query.bbox === undefined &&
        query.tubeIdentifier === undefined &&
        query.datetime === undefined &&
        query.status === undefined;
      const pageKeyOf = (state: { registryVersion: string; snapshot: string }) =>
        JSON.stringify([
          collectionId,
          collectionId === 'tubes' ? state.registryVersion : state.snapshot,
          grantsCacheKey(client),
          self.href,
          createHash('sha256').update(key).digest('base64url'),
        ]);
      // Looked up as latest's kept documents are: one statement in a snapshot of its own, no transaction.
      const kept = keptWhole
        ? keptPages.get(
            pageKeyOf(
              await reads.read(({ sql, gate }) =>
                gate.run(() => stateOf(sql), clientGoneSignal(reply), 'ogc'),
              ),
            ),
          )
        : undefined;
      const page =
        kept ??
        (await inSnapshot(reads, reply, async (tx): Promise<KeptPage> => {
          const state = await stateOf(tx);
          const view = (await views.view(tx, client, state.registryVersion)).tubes;
          const tubes = queriedTubes(view, query);
          const whole = tubes === view;
          const pageKey = keptWhole && whole ? pageKeyOf(state) : undefined;
          const features =
            collectionId === 'tubes'
              ? tubesPage(tubes, query, position, limit, whole)
              : await latestPage(
                  tx,
                  tubes,
                  query,
                  position,
                  limit,
                  // A whole view's latest features are kept per snapshot, as latest keeps its documents.
                  whole && query.datetime === undefined
                    ? {
                        kept: keptLatest,
                        key: JSON.stringify([
                          state.snapshot,
                          grantsCacheKey(client),
                          query.status,
                          query.skipGeometry === true,
                        ]),
                      }
                    : undefined,
                );
          const written = {
            body: featureCollection(
              features.features,
              features.returned,
              features.numberMatched,
              linksOf(features.next),
            ),
            returned: features.returned,
          };
          if (pageKey !== undefined) keptPages.set(pageKey, written, written.body.length);
          return written;
        }));
      request.rowsStreamed = page.returned;
      return reply.type(query.f === 'json' ? JSON_TYPE : GEOJSON).send(page.body);
    },
  });

  api.route({
    method: READ_METHODS,
    url: `${OGC_URL}/collections/:collectionId/items/:featureId`,
    schema: {
      querystring: FeatureQuery,
      params: z.object({ collectionId: z.string(), featureId: z.string() }),
    },
    handler: async (request, reply) => {
      const { collectionId, featureId } = request.params;
      if (!isCollection(collectionId)) throw collectionNotFound(collectionId);
      const client = clientOf(request);
      const found = await inSnapshot(reads, reply, async (tx): Promise<Feature | undefined> => {
        if (collectionId === 'measurements') {
          const id = measurementId(featureId);
          if (id === undefined) return undefined;
          const [tube] = await tubesInView(tx, client, [id.tube]);
          if (tube === undefined) return undefined;
          return measurementAt(tx, tube, id.observedAt);
        }
        const identifier = canonicalTubeIdentifier(featureId);
        if (identifier === undefined) return undefined;
        const [tube] = await tubesInView(tx, client, [identifier]);
        if (tube === undefined) return undefined;
        if (collectionId === 'tubes') return tubeFeature(tube);
        const [latest] = await latestRowsOf(tx, [tube], {});
        return latest && latestFeature(latest.tube, latest.row);
      });
      if (found === undefined) throw featureNotFound();
      const self = {
        rel: 'self',
        type: GEOJSON,
        href: urlOf(request, `/collections/${collectionId}/items/${encodeURIComponent(featureId)}`),
      };
      const collection = {
        rel: 'collection',
        type: JSON_TYPE,
        href: urlOf(request, `/collections/${collectionId}`),
      };
      return sendJson(reply, request.query.f === 'json' ? JSON_TYPE : GEOJSON, {
        ...found,
        links: [self, collection],
      });
    },
  });
}

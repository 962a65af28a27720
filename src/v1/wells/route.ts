/**
 * GET /v1/groundwater-monitoring-wells[?format][&bbox]: the wells and tubes the key may read, as JSON or
 * GeoJSON, all of them or those inside a box, from discoveryCache.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ReadSources } from '../../db/readReplicas/readSources.js';
import { clientGoneSignal } from '../../http/clientGone.js';
import { type Coding, negotiateCoding } from '../../http/compression.js';
import { isNotModified, sendNotModified, setValidators, type Validators } from '../../http/conditional.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { NEGOTIATED_VARY, negotiate } from '../../http/negotiation.js';
import { forbidden } from '../../http/problems/problems.js';
import { type Client, readsNothing } from '../../keys/clients.js';
import { bboxParameter } from '../bbox.js';
import { GIVEN_TWICE } from '../measurementsQuery.js';
import {
  type CachedDiscovery,
  createDiscoveryCache,
  type Representation,
  representationOf,
  worthCompressing,
} from './discoveryCache.js';
import {
  DISCOVERY_FORMAT_NAMES,
  DISCOVERY_FORMATS,
  type DiscoveryFormat,
  discoveryDocument,
  wellsInBox,
  writeWells,
} from './document.js';
import type { Well } from './schemas.js';
import { registryVersion, visibleTubes } from './sql.js';

export const WELLS_URL = '/groundwater-monitoring-wells';

const FORMAT_MESSAGE = `must be ${DISCOVERY_FORMAT_NAMES.join(' or ')}`;

/** Discovery's query: both parameters optional, anything else ignored. */
export const WellsQuery = z.object({
  format: z
    .enum(DISCOVERY_FORMAT_NAMES, {
      error: (issue) => (Array.isArray(issue.input) ? GIVEN_TWICE : FORMAT_MESSAGE),
    })
    .optional()
    .meta({
      param: {
        description:
          'The format: `json` (application/json, a list of wells) or `geojson` (application/geo+json, ' +
          'one GeoJSON FeatureCollection with a Feature per well, for GIS tools). When given, it decides ' +
          'over the Accept header; without it, Accept decides: the type with the highest q, JSON before ' +
          'GeoJSON among equals, and JSON when neither is acceptable.',
      },
    }),
  bbox: bboxParameter,
});
export type WellsQuery = z.output<typeof WellsQuery>;

export async function wellsRoute(app: FastifyInstance, options: { reads: ReadSources }): Promise<void> {
  const { reads } = options;
  // Each database read waits at the gate only when it happens: a fresh cached document needs none. The
  // version read is shared by every request, so no one client leaving may call it off.
  const cache = createDiscoveryCache<Well[], DiscoveryFormat>(
    {
      currentVersion: () =>
        reads.read(({ sql, gate }) => gate.run(() => registryVersion(sql), undefined, 'discovery')),
      async load(client, signal) {
        const { version, changedAt, rows, heldThroughMs } = await reads.read(
          async ({ sql, gate, heldThroughMs }) => ({
            // Before the read: what the source held then, it holds in the read's snapshot too.
            heldThroughMs: heldThroughMs(),
            ...(await gate.run(() => visibleTubes(sql, client), signal, 'discovery')),
          }),
        );
        return { version, changedAt, heldThroughMs, document: discoveryDocument(rows) };
      },
    },
    { formats: DISCOVERY_FORMAT_NAMES, write: writeWells },
  );
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: WELLS_URL,
    schema: { querystring: WellsQuery },
    // Not async, so that what cache.get answers at once is sent in this turn; only a load or a first
    // compression is waited for.
    handler(request, reply) {
      const client = request.client!;
      if (readsNothing(client)) throw forbidden();
      const { query } = request;
      // The signal only when the document must be loaded: an AbortController is not free
      // (docs/decisions/0013-per-request-costs.md), and a cached request waits for nothing.
      const cached = cache.get(client, () => clientGoneSignal(reply));
      if (cached instanceof Promise)
        return cached.then((document) => sendWells(request, reply, document, query));
      return sendWells(request, reply, cached, query);
    },
  });
}

/**
 * The body the request asks for: the cached one of every well, or, with a box, one written for this
 * request from the cached document (the same snapshot, so the same validators hold for it).
 */
function representationFor(
  cached: CachedDiscovery<Well[], DiscoveryFormat>,
  format: DiscoveryFormat,
  query: WellsQuery,
): Representation {
  if (query.bbox === undefined) return cached.representation(format);
  return representationOf(writeWells(wellsInBox(cached.document, query.bbox), format), format, 'once');
}

/** The body's tag, and the later of the last change the key can see and of its grants (either may change it). */
function discoveryValidators(
  client: Client,
  { changedAt }: CachedDiscovery<Well[], DiscoveryFormat>,
  representation: Representation,
  coding: Coding | undefined,
): Validators {
  const accessChangedAt = client.accessChangedAt ?? changedAt;
  return {
    etag: representation.etag(coding),
    lastModified: accessChangedAt > changedAt ? accessChangedAt : changedAt,
  };
}

function sendWells(
  request: FastifyRequest,
  reply: FastifyReply,
  cached: CachedDiscovery<Well[], DiscoveryFormat>,
  query: WellsQuery,
): undefined | Promise<FastifyReply> {
  const format = query.format ?? negotiate(request.headers.accept, DISCOVERY_FORMATS).name;
  const representation = representationFor(cached, format, query);
  reply.header('Vary', NEGOTIATED_VARY);
  const coding = worthCompressing(representation)
    ? negotiateCoding(request.headers['accept-encoding'])
    : undefined;
  const validators = discoveryValidators(request.client!, cached, representation, coding);
  if (isNotModified(request, validators, cached.heldThroughMs)) {
    sendNotModified(reply, validators);
    return undefined;
  }
  setValidators(reply.type(DISCOVERY_FORMATS.find(({ name }) => name === format)!.mediaType), validators);
  if (coding) reply.header('Content-Encoding', coding);
  const body = coding ? representation.encoded(coding) : representation.body;
  if (body instanceof Promise) return body.then((encoded) => reply.send(encoded));
  reply.send(body);
  return undefined;
}

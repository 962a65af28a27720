/** GET /v1/groundwater-monitoring-wells: the wells and tubes the key may read, from discoveryCache.ts. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReadSources } from '../../db/readReplicas/readSources.js';
import { groupWells } from '../../domain/discoveryOrder.js';
import { compileSerializer } from '../../domain/jsonSchema.js';
import { clientGoneSignal } from '../../http/clientGone.js';
import { type Coding, negotiateCoding } from '../../http/compression.js';
import { isNotModified, sendNotModified, setValidators, type Validators } from '../../http/conditional.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden } from '../../http/problems/problems.js';
import { type Client, readsNothing } from '../../keys/clients.js';
import { type CachedBody, createDiscoveryCache, worthCompressing } from './discoveryCache.js';
import { WellList } from './schemas.js';
import { registryVersion, visibleTubes } from './sql.js';

export const WELLS_URL = '/groundwater-monitoring-wells';

export const serializeWells = compileSerializer(WellList);

export async function wellsRoute(app: FastifyInstance, options: { reads: ReadSources }): Promise<void> {
  const { reads } = options;
  // Each database read waits at the gate only when it happens: a fresh cached body needs none. The
  // version read is shared by every request, so no one client leaving may call it off.
  const cache = createDiscoveryCache({
    currentVersion: () => reads.read(({ sql, gate }) => gate.run(() => registryVersion(sql))),
    async load(client, signal) {
      const { version, changedAt, rows, heldThroughMs } = await reads.read(
        async ({ sql, gate, heldThroughMs }) => ({
          // Before the read: what the source held then, it holds in the read's snapshot too.
          heldThroughMs: heldThroughMs(),
          ...(await gate.run(() => visibleTubes(sql, client), signal)),
        }),
      );
      return { version, changedAt, heldThroughMs, body: Buffer.from(serializeWells(groupWells(rows))) };
    },
  });
  app.route({
    method: READ_METHODS,
    url: WELLS_URL,
    // Not async, so that what cache.get answers at once is sent in this turn; only a load or a first
    // compression is waited for.
    handler(request, reply) {
      const client = request.client!;
      if (readsNothing(client)) throw forbidden();
      // The signal only when the body must be loaded: an AbortController is not free
      // (docs/decisions/0013-per-request-costs.md), and a cached request waits for nothing.
      const cached = cache.get(client, () => clientGoneSignal(reply));
      if (cached instanceof Promise) return cached.then((body) => sendWells(request, reply, body));
      return sendWells(request, reply, cached);
    },
  });
}

/** The body's tag, and the later of the last change the key can see and of its grants (either may change it). */
function discoveryValidators(client: Client, cached: CachedBody, coding: Coding | undefined): Validators {
  const { changedAt } = cached;
  const accessChangedAt = client.accessChangedAt ?? changedAt;
  return {
    etag: cached.etag(coding),
    lastModified: accessChangedAt > changedAt ? accessChangedAt : changedAt,
  };
}

function sendWells(
  request: FastifyRequest,
  reply: FastifyReply,
  cached: CachedBody,
): undefined | Promise<FastifyReply> {
  reply.header('Vary', 'Accept-Encoding');
  const coding = worthCompressing(cached) ? negotiateCoding(request.headers['accept-encoding']) : undefined;
  const validators = discoveryValidators(request.client!, cached, coding);
  if (isNotModified(request, validators, cached.heldThroughMs)) {
    sendNotModified(reply, validators);
    return undefined;
  }
  setValidators(reply.type('application/json'), validators);
  if (coding) reply.header('Content-Encoding', coding);
  const body = coding ? cached.encoded(coding) : cached.body;
  if (body instanceof Promise) return body.then((encoded) => reply.send(encoded));
  reply.send(body);
  return undefined;
}

/**
 * GET /v1/groundwater-monitoring-measurements?from&to[&aggregate][&tubes][&changedSince][&bbox]: the series of
 * many tubes, or of every tube the key may read, from one snapshot in one stream.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { bucketingOf, measurementsSelect, shapeOf } from '../../engine/read/selects.js';
import { seriesHead } from '../../engine/read/tubes.js';
import { FORMAT_LIST } from '../../engine/write/formats.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden, invalidParameter } from '../../http/problems/problems.js';
import { type StreamDependencies, sendDocument } from '../../http/streamedResponse.js';
import { readsNothing } from '../../keys/clients.js';
import type { SyncPoint } from '../../sync/token.js';
import type { SyncTokens } from '../../sync/tokens.js';
import { intervalOf, writerOptionsOf } from '../measurementsQuery.js';
import { selectNetwork } from './plan.js';
import { NetworkQuery } from './query.js';
import { removalsUntold, TOKEN_NOT_ISSUED } from './refusals.js';

export const NETWORK_URL = '/groundwater-monitoring-measurements';

/** The file name's first part: the series' files start with their tube's identifier instead. */
export const FILE_NAME_STEM = 'groundwater-measurements';

/** The header that carries the response's sync token, as the JSON's `syncToken` does. */
export const SYNC_TOKEN_HEADER = 'Sync-Token';

export async function networkRoute(
  app: FastifyInstance,
  options: StreamDependencies & { sync: SyncTokens },
): Promise<void> {
  const { sync } = options;
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: NETWORK_URL,
    schema: { querystring: NetworkQuery },
    handler: async (request, reply) => {
      const { query } = request;
      const client = request.client!;
      // A token is a parameter: refused (400) before access is looked at.
      let since: SyncPoint | undefined;
      if (query.changedSince !== undefined) {
        since = await sync.read(query.changedSince, client.keyId);
        if (since === undefined) throw invalidParameter('changedSince', TOKEN_NOT_ISSUED);
      }
      if (readsNothing(client)) throw forbidden();
      const interval = intervalOf(query);
      return sendDocument(request, reply, options, {
        kind: 'network',
        bulk: true,
        offered: FORMAT_LIST,
        format: query.format,
        writer: (format) => format.network(writerOptionsOf(interval, { delta: since !== undefined })),
        async plan(source, tx, { format, coding, writer }) {
          const pool = source.sql;
          const selection = await selectNetwork(
            tx,
            sync,
            {
              client,
              listed: query.tubes,
              bbox: query.bbox,
              since,
              tagInputs: { ...interval, coding, variant: format.name, changedSince: query.changedSince },
            },
            source,
          );
          const tubeIds = selection.tubes.map((tube) => tube.id);
          let select: string;
          if (since === undefined) {
            select = await measurementsSelect(pool, tx, tubeIds, interval);
          } else {
            const aggregate = await bucketingOf(pool, tx, interval.aggregate);
            const delta = await sync.delta(tx, { tubeIds, ...interval, since, aggregate });
            if (delta === undefined) throw removalsUntold();
            select = delta;
          }
          const tubes = selection.tubes.map((tube) => seriesHead(tube, tube.identifier, interval));
          return {
            validators: selection.validators,
            headers: { [SYNC_TOKEN_HEADER]: selection.syncToken },
            document: {
              opening: writer.open({ ...interval, syncToken: selection.syncToken }, tubes),
              tubes,
              // A delta holds only the tubes it changed.
              everyTube: since === undefined,
              select,
              shape: shapeOf(interval.aggregate, interval.withStatus),
            },
          };
        },
        // Every plan of this endpoint is a document, if only of no tube.
        notFound: () => new Error('a network plan found nothing to write'),
        interval,
        file: { stem: FILE_NAME_STEM, ...interval },
      });
    },
  });
}

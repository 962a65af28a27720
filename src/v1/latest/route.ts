/**
 * GET /v1/groundwater-monitoring-measurements/latest[?tubes][&bbox][&status][&include][&format]: the
 * latest measurement of each tube the key may read (or of the listed ones, of the wells in the box), in
 * discovery's order, from one snapshot.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { shapeOf } from '../../engine/read/selects.js';
import { STATUSES } from '../../engine/schemas.js';
import { LATEST_FORMAT_LIST } from '../../engine/write/formats.js';
import type { LatestFormat, LatestWriter } from '../../engine/write/writer.js';
import { BudgetCache } from '../../http/budgetCache.js';
import type { Coding } from '../../http/compression.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden } from '../../http/problems/problems.js';
import {
  type KeptDocument,
  type ResponsePlan,
  type StreamDependencies,
  sendDocument,
} from '../../http/streamedResponse.js';
import { type Client, grantsCacheKey, readsNothing } from '../../keys/clients.js';
import { type DatabaseState, databaseState, KeyViews, latestTube, seriesState } from '../keyViews.js';
import { statusRequestOf } from '../measurementsQuery.js';
import { inBox, pickListed } from '../tubesInView.js';
import { LatestQuery } from './query.js';
import { latestSelect } from './sql.js';
import { latestValidators } from './validators.js';

export const LATEST_URL = '/groundwater-monitoring-measurements/latest';

/** The file's name, without an interval: latest has none. */
export const LATEST_FILE_STEM = 'groundwater-latest-measurements';

/** Bytes of latest bodies kept at most, over every key and request. */
const KEPT_BYTES = 32 * 1024 * 1024;

/**
 * What a latest response is made from: the database's snapshot (the registry's version with it), the
 * key's grants, and the request's every choice. Last-Modified depends on the grants' change time too.
 */
function keptAs(
  state: DatabaseState,
  client: Client,
  query: LatestQuery,
  negotiated: { format: { name: string }; coding: Coding | undefined },
): string {
  return JSON.stringify([
    state.snapshot,
    grantsCacheKey(client),
    client.accessChangedAt?.getTime(),
    query.tubes,
    query.bbox,
    query.status,
    query.include,
    negotiated.format.name,
    negotiated.coding,
  ]);
}

export async function latestRoute(app: FastifyInstance, options: StreamDependencies): Promise<void> {
  const views = new KeyViews();
  // Every latest document is small (a row per tube at most) and asked for again and again between
  // imports (dashboards): kept whole, it is answered without a transaction or a row read.
  const documents = new BudgetCache<KeptDocument<ResponsePlan>>(KEPT_BYTES);
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: LATEST_URL,
    schema: { querystring: LatestQuery },
    handler: async (request, reply) => {
      const { query } = request;
      const client = request.client!;
      if (readsNothing(client)) throw forbidden();
      const { statuses, withStatus = false } = statusRequestOf(query);
      return sendDocument<ResponsePlan, LatestWriter, LatestFormat>(request, reply, options, {
        kind: 'latest',
        offered: LATEST_FORMAT_LIST,
        format: query.format,
        writer: (format) => format.latest(withStatus ? { statuses: STATUSES } : {}),
        keeping: {
          documents,
          keptAsNow: async ({ sql }, negotiated) =>
            keptAs(await databaseState(sql), client, query, negotiated),
        },
        async plan(_source, tx, negotiated) {
          const { format, coding, writer } = negotiated;
          const state = await databaseState(tx);
          const view = await views.view(tx, client, state.registryVersion);
          const listed = query.tubes ? pickListed(view.tubes, query.tubes) : view.tubes;
          const { tubes, locationsChangedAt } = inBox(listed, query.bbox);
          const inputs = {
            registryVersion: view.version,
            tubes,
            series: await seriesState(tx, tubes),
            statuses,
            withStatus,
            coding,
            variant: format.name,
          };
          return {
            validators: latestValidators(inputs, client, locationsChangedAt),
            keptAs: keptAs(state, client, query, negotiated),
            document: {
              // The view's own list when it is whole, so a writer's pieces of it are made once.
              opening: writer.open(tubes === view.tubes ? view.latestTubes : tubes.map(latestTube)),
              // Rows of many tubes in each batch: the writer has the tubes from its opening.
              tubes: [],
              everyTube: false,
              select: latestSelect(
                tubes.map((tube) => tube.id),
                statuses,
                withStatus,
              ),
              shape: shapeOf(undefined, withStatus),
            },
          };
        },
        // Every plan of this endpoint is a document, if only of no tube.
        notFound: () => new Error('a latest plan found nothing to write'),
        file: { stem: LATEST_FILE_STEM },
      });
    },
  });
}

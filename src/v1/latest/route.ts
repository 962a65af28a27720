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
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden } from '../../http/problems/problems.js';
import { type StreamDependencies, sendDocument } from '../../http/streamedResponse.js';
import { readsNothing } from '../../keys/clients.js';
import { statusRequestOf } from '../measurementsQuery.js';
import { inBox, pickListed } from '../tubesInView.js';
import { LatestQuery } from './query.js';
import { latestSelect } from './sql.js';
import { latestValidators, seriesState } from './validators.js';
import { LatestViews, latestTube } from './views.js';

export const LATEST_URL = '/groundwater-monitoring-measurements/latest';

/** The file's name, without an interval: latest has none. */
export const LATEST_FILE_STEM = 'groundwater-latest-measurements';

export async function latestRoute(app: FastifyInstance, options: StreamDependencies): Promise<void> {
  const views = new LatestViews();
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: LATEST_URL,
    schema: { querystring: LatestQuery },
    handler: async (request, reply) => {
      const { query } = request;
      const client = request.client!;
      if (readsNothing(client)) throw forbidden();
      const { statuses, withStatus = false } = statusRequestOf(query);
      return sendDocument(request, reply, options, {
        offered: LATEST_FORMAT_LIST,
        format: query.format,
        writer: (format) => format.latest(withStatus ? { statuses: STATUSES } : {}),
        async plan(_source, tx, { format, coding, writer }) {
          const view = await views.view(tx, client);
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

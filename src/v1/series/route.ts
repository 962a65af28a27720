/** GET /v1/groundwater-monitoring-tubes/{tubeIdentifier}/measurements: one tube's series, streamed. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { seriesDocument } from '../../engine/document.js';
import { findTube } from '../../engine/read/tubes.js';
import { canonicalTubeIdentifier } from '../../engine/schemas.js';
import { FORMAT_LIST } from '../../engine/write/formats.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden, tubeNotFound } from '../../http/problems/problems.js';
import { type StreamDependencies, sendDocument } from '../../http/streamedResponse.js';
import { mayRead, readsNothing } from '../../keys/clients.js';
import { intervalOf, MeasurementsQuery, writerOptionsOf } from '../measurementsQuery.js';
import { seriesValidators } from './validators.js';

export const MEASUREMENTS_URL = '/groundwater-monitoring-tubes/:tubeIdentifier/measurements';

export async function seriesRoute(app: FastifyInstance, options: StreamDependencies): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: MEASUREMENTS_URL,
    // The query only, for GET and HEAD alike (v1/plugin.ts). Not the path parameter: a malformed
    // identifier is the 404 of an unknown tube, which comes after the 400 and the 403, and Fastify
    // would check params before the query.
    schema: { querystring: MeasurementsQuery },
    handler: async (request, reply) => {
      const { query } = request;
      const client = request.client!;
      if (readsNothing(client)) throw forbidden();
      const { tubeIdentifier: requested } = request.params as { tubeIdentifier: string };
      const tubeIdentifier = canonicalTubeIdentifier(requested);
      if (tubeIdentifier === undefined) throw tubeNotFound();
      const interval = intervalOf(query);
      return sendDocument(request, reply, options, {
        kind: 'series',
        offered: FORMAT_LIST,
        format: query.format,
        writer: (format) => format.series(writerOptionsOf(interval)),
        async plan({ sql }, tx, { format, coding }) {
          const tube = await findTube(tx, tubeIdentifier);
          // Unknown and hidden tubes end the same way: no output at all.
          if (!tube || !mayRead(client, tube.id)) return undefined;
          return {
            validators: seriesValidators(
              {
                tubeIdentifier,
                seriesVersion: tube.seriesVersion,
                ...interval,
                coding,
                aggregate: interval.aggregate,
                statuses: interval.statuses,
                withStatus: interval.withStatus,
                variant: format.mediaType,
              },
              tube.seriesChangedAt,
            ),
            document: await seriesDocument(sql, tx, tube, tubeIdentifier, interval),
          };
        },
        notFound: tubeNotFound,
        interval,
        file: { stem: tubeIdentifier, ...interval },
      });
    },
  });
}

/** GET /v1/groundwater-monitoring-tubes/{tubeIdentifier}/measurements?from&to[&aggregate]: one tube's series, streamed. */
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Permit } from '../../db/connectionGate.js';
import type { ReadSource, ReadSources } from '../../db/readReplicas/readSources.js';
import { formatInstant } from '../../domain/datetime.js';
import { type DocumentRequest, openDocumentStream, seriesDocument } from '../../engine/document.js';
import { findTube, type TubeRow } from '../../engine/read/selects.js';
import { arrowSeries } from '../../engine/write/arrow.js';
import { csvSeries, seriesAttachment } from '../../engine/write/csv.js';
import { negotiateSeriesFormat, SERIES_VARY } from '../../engine/write/formats.js';
import { jsonSeries } from '../../engine/write/json.js';
import type { SeriesRepresentation } from '../../engine/write/writer.js';
import { clientGoneSignal } from '../../http/clientGone.js';
import { type Coding, compressStream, negotiateCoding } from '../../http/compression.js';
import {
  isConditional,
  isNotModified,
  sendNotModified,
  setValidators,
  type Validators,
} from '../../http/conditional.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import type { ServiceMetrics } from '../../http/observability/metrics.js';
import { forbidden, tubeNotFound } from '../../http/problems/problems.js';
import { mayRead, readsNothing } from '../../keys/clients.js';
import { TubeIdentifier } from '../wells/schemas.js';
import { SeriesQuery } from './query.js';
import { seriesValidators } from './validators.js';

/**
 * The document's stream with a permit of the connection gate for as long as it holds its pooled
 * connection: the permit goes back with `connection.released`. Each attempt takes its own permit, so a
 * retry after a lost connection waits its turn like any request.
 */
async function openGatedDocumentStream(
  { sql, gate }: ReadSource,
  metrics: ServiceMetrics,
  document: Omit<DocumentRequest, 'connection'>,
  representation: SeriesRepresentation,
  signal: AbortSignal,
) {
  // Created first, so the stream gauge counts the wait at the gate as waiting.
  const use = metrics.streamConnection();
  let permit: Permit;
  try {
    permit = await gate.acquire(signal);
  } catch (error) {
    use.released();
    throw error;
  }
  const connection = {
    held: () => use.held(),
    released() {
      use.released();
      permit.release();
    },
  };
  return openDocumentStream(sql, { ...document, connection }, representation);
}

export interface StreamDependencies {
  reads: ReadSources;
  metrics: ServiceMetrics;
}

/**
 * The body of a streamed response (a series, or many): the document of the source it is read from,
 * opened with a gate permit, and read again (elsewhere, when there is another source) if the connection
 * is lost or the source cannot answer exactly before anything is sent; its rows counted for the request log and
 * the metrics; a failure after the first byte logged and counted as a cut-off (Fastify then destroys
 * the socket, and the client sees an incomplete body). Undefined when the plan found nothing to write.
 */
export async function streamDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  { reads, metrics }: StreamDependencies,
  documentOf: (source: ReadSource) => Pick<DocumentRequest, 'plan'>,
  representation: SeriesRepresentation,
  coding: Coding | undefined,
): Promise<Readable | undefined> {
  request.rowsStreamed = 0;
  const onRows = (count: number) => {
    request.rowsStreamed = (request.rowsStreamed ?? 0) + count;
    metrics.measurementsStreamed(count);
  };
  const signal = clientGoneSignal(reply);
  const stream = await reads.read((source) =>
    openGatedDocumentStream(source, metrics, { ...documentOf(source), onRows }, representation, signal),
  );
  if (!stream) return undefined;
  stream.once('error', (error) => {
    request.log.error({ err: error }, 'series stream failed after the first byte; response cut off');
    metrics.seriesCutOff();
  });
  return coding ? compressStream(stream, coding) : stream;
}

/** The lower-case form of a well-formed identifier; undefined for a malformed one (which is a 404). */
export function canonicalTubeIdentifier(text: string): string | undefined {
  return TubeIdentifier.safeParse(text).success ? text.toLowerCase() : undefined;
}

export const MEASUREMENTS_URL = '/groundwater-monitoring-tubes/:tubeIdentifier/measurements';

export async function measurementsRoute(app: FastifyInstance, options: StreamDependencies): Promise<void> {
  const { reads } = options;
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: MEASUREMENTS_URL,
    // The query only, for GET and HEAD alike (v1/plugin.ts). Not the path parameter: a malformed
    // identifier is the 404 of an unknown tube, which comes after the 400 and the 403, and Fastify
    // would check params before the query.
    schema: { querystring: SeriesQuery },
    handler: async (request, reply) => {
      const { query } = request;
      const client = request.client!;
      if (readsNothing(client)) throw forbidden();
      const { tubeIdentifier: requested } = request.params as { tubeIdentifier: string };
      const tubeIdentifier = canonicalTubeIdentifier(requested);
      if (tubeIdentifier === undefined) throw tubeNotFound();
      const from = formatInstant(query.from);
      const to = formatInstant(query.to);

      const coding = negotiateCoding(request.headers['accept-encoding']);
      const format = query.format ?? negotiateSeriesFormat(request.headers.accept);
      const representation = format === 'csv' ? csvSeries() : format === 'arrow' ? arrowSeries() : jsonSeries;
      const validatorsOf = (tube: TubeRow) =>
        seriesValidators(
          {
            tubeIdentifier,
            seriesVersion: tube.seriesVersion,
            from,
            to,
            coding,
            aggregate: query.aggregate,
            variant: representation.mediaType,
          },
          tube.seriesChangedAt,
        );
      // Vary on the 304 too: it says which request headers chose the representation.
      const varied = () => reply.header('Vary', SERIES_VARY);
      const withHeaders = (validators: Validators) => {
        setValidators(varied().type(representation.mediaType), validators);
        if (format !== 'json') {
          const extension = format === 'csv' ? 'csv' : 'arrows';
          reply.header('Content-Disposition', seriesAttachment({ tubeIdentifier, from, to }, extension));
        }
        if (coding) reply.header('Content-Encoding', coding);
        return reply;
      };

      // The tube alone answers a HEAD and a 304: no measurement is read. A GET that is not
      // conditional skips this read and takes the validators from the stream's own snapshot.
      if (request.method === 'HEAD' || isConditional(request)) {
        const signal = clientGoneSignal(reply);
        const { tube, heldThroughMs } = await reads.read(async ({ sql, gate, heldThroughMs }) => ({
          // Before the read: what the source held then, it holds in the read's snapshot too.
          heldThroughMs: heldThroughMs(),
          tube: await gate.run(() => findTube(sql, tubeIdentifier), signal),
        }));
        if (!tube || !mayRead(client, tube.id)) throw tubeNotFound();
        const validators = validatorsOf(tube);
        if (isNotModified(request, validators, heldThroughMs)) return sendNotModified(varied(), validators);
        if (request.method === 'HEAD') return withHeaders(validators).send();
      }

      let validators: Validators | undefined;
      const onTube = (tube: TubeRow) => {
        validators = validatorsOf(tube);
      };
      const series = { client, tubeIdentifier, from, to, aggregate: query.aggregate, onTube };
      const body = await streamDocument(
        request,
        reply,
        options,
        () => seriesDocument(series),
        representation,
        coding,
      );
      if (!body) throw tubeNotFound();
      // Set by onTube before the stream's first chunk, which openDocumentStream waits for.
      return withHeaders(validators!).send(body);
    },
  });
}

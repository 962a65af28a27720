/**
 * GET /v1/groundwater-monitoring-measurements?from&to[&aggregate][&tubes][&changedSince]: the series of
 * many tubes, or of every tube the key may read, from one snapshot in one stream (v1.2.md).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Queryable } from '../../db/connect.js';
import { type ReadSource, SourceBehind } from '../../db/readReplicas/readSources.js';
import { begin } from '../../db/transaction.js';
import { formatInstant } from '../../domain/datetime.js';
import { bucketingOf, type DocumentPlan, measurementsSelect, seriesHead } from '../../engine/document.js';
import { shapeOf } from '../../engine/read/selects.js';
import { arrowNetwork } from '../../engine/write/arrowNetwork.js';
import { seriesAttachment } from '../../engine/write/csv.js';
import { csvNetwork } from '../../engine/write/csvNetwork.js';
import { negotiateSeriesFormat, SERIES_VARY, type SeriesFormat } from '../../engine/write/formats.js';
import { jsonNetwork } from '../../engine/write/jsonNetwork.js';
import type { NetworkRepresentation } from '../../engine/write/networkWriter.js';
import { clientGoneSignal } from '../../http/clientGone.js';
import { negotiateCoding } from '../../http/compression.js';
import {
  isConditional,
  isNotModified,
  sendNotModified,
  setValidators,
  type Validators,
} from '../../http/conditional.js';
import { READ_METHODS } from '../../http/hooks/methods.js';
import { forbidden, invalidParameter } from '../../http/problems/problems.js';
import { type Client, readsNothing } from '../../keys/clients.js';
import { type SyncPoint, seesAllOf, standbyPoint } from '../../sync/token.js';
import type { SyncTokens } from '../../sync/tokens.js';
import { canonicalTubeIdentifier, type StreamDependencies, streamDocument } from '../series/route.js';
import { NetworkQuery } from './query.js';
import { changesGone, listedTubeNotFound, TOKEN_NOT_ISSUED } from './refusals.js';
import { acrossTubes, LISTED_TUBE, type NetworkTubeRow, tubesInView } from './sql.js';
import { type NetworkRepresentationInputs, networkValidators } from './validators.js';

export const NETWORK_MEASUREMENTS_URL = '/groundwater-monitoring-measurements';

/** The file name's first part: the series' files start with their tube's identifier instead. */
const FILE_NAME_STEM = 'groundwater-measurements';

type FileExtension = Parameters<typeof seriesAttachment>[1];

/** `groundwater-measurements_<from>_<to>.<extension>`, as the series names its files. */
export const networkAttachment = (from: string, to: string, extension: FileExtension) =>
  seriesAttachment({ tubeIdentifier: FILE_NAME_STEM, from, to }, extension);

/** The writer of each format, a fresh one per response: a format the series gains must be added here. */
const WRITERS: Record<SeriesFormat, () => NetworkRepresentation> = {
  json: jsonNetwork,
  csv: csvNetwork,
  arrow: arrowNetwork,
};

/** The extension of each format that comes as a file (Content-Disposition). */
const FILE_EXTENSIONS: Record<SeriesFormat, FileExtension | undefined> = {
  json: undefined,
  csv: 'csv',
  arrow: 'arrows',
};

/** The header that carries the response's sync token, as the JSON's `syncToken` does. */
export const SYNC_TOKEN_HEADER = 'Sync-Token';

export interface NetworkSelection {
  /** The response's tubes, in discovery's order. */
  tubes: NetworkTubeRow[];
  /** The token of the snapshot the selection was read in. */
  syncToken: string;
  validators: Validators;
}

interface SelectionRequest {
  client: Client;
  /** `tubes` as sent, or undefined for every tube the key may read. */
  listed: readonly string[] | undefined;
  /** What `changedSince` stands for, when given. */
  since: SyncPoint | undefined;
  representation: Omit<NetworkRepresentationInputs, 'tubes'>;
}

/**
 * Access, in the response's snapshot: the tubes, a 404 naming the first listed identifier the key may
 * not read (malformed, unknown and hidden alike), then the 410 of a token whose changes are gone. On a
 * read replica the snapshot is what a standby can vouch for (standbyPoint), and a replica that has not
 * replayed all the token's snapshot saw is no answer at all (SourceBehind): a delta from it would start
 * before the token, and its 410 would be its lag's, not the token's.
 */
export async function selectNetwork(
  tx: Queryable,
  sync: SyncTokens,
  { client, listed, since, representation }: SelectionRequest,
  source: Pick<ReadSource, 'replica'>,
): Promise<NetworkSelection> {
  const canonical = listed?.map(canonicalTubeIdentifier);
  const wellFormed = canonical?.filter((identifier): identifier is string => identifier !== undefined);
  const tubes = await tubesInView(tx, client, wellFormed);
  if (listed) {
    const found = new Set(tubes.map((tube) => tube.identifier));
    const missing = listed.findIndex((_, index) => !found.has(canonical![index]!));
    if (missing !== -1) throw listedTubeNotFound(listed[missing]!);
  }
  const read = await sync.current(tx, client);
  const now = source.replica ? standbyPoint(read) : read;
  if (since !== undefined && source.replica && !seesAllOf(now, since)) {
    throw new SourceBehind(async (primary) => {
      if (!seesAllOf(await sync.current(primary, client), since)) throw changesGone();
    });
  }
  if (since !== undefined && (await sync.gone(tx, since, now))) throw changesGone();
  return {
    tubes,
    syncToken: await sync.issue(tx, now, client.keyId),
    validators: networkValidators({ tubes, ...representation }, client),
  };
}

export async function networkMeasurementsRoute(
  app: FastifyInstance,
  options: StreamDependencies & { sync: SyncTokens },
): Promise<void> {
  const { reads, sync } = options;
  app.withTypeProvider<ZodTypeProvider>().route({
    method: READ_METHODS,
    url: NETWORK_MEASUREMENTS_URL,
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
      const from = formatInstant(query.from);
      const to = formatInstant(query.to);
      const coding = negotiateCoding(request.headers['accept-encoding']);
      const format = query.format ?? negotiateSeriesFormat(request.headers.accept);
      const writer = WRITERS[format]();
      const selectionRequest: SelectionRequest = {
        client,
        listed: query.tubes,
        since,
        representation: {
          from,
          to,
          coding,
          aggregate: query.aggregate,
          variant: format,
          changedSince: query.changedSince,
        },
      };
      const varied = () => reply.header('Vary', SERIES_VARY);
      const withHeaders = ({ validators, syncToken }: NetworkSelection) => {
        setValidators(varied().type(writer.mediaType), validators).header(SYNC_TOKEN_HEADER, syncToken);
        const extension = FILE_EXTENSIONS[format];
        if (extension) reply.header('Content-Disposition', networkAttachment(from, to, extension));
        if (coding) reply.header('Content-Encoding', coding);
        return reply;
      };

      // HEAD and a conditional GET read the selection alone: no measurement.
      if (request.method === 'HEAD' || isConditional(request)) {
        const signal = clientGoneSignal(reply);
        const { selection, heldThroughMs } = await reads.read(async (source) => ({
          // Before the read: what the source held then, it holds in the read's snapshot too.
          heldThroughMs: source.heldThroughMs(),
          selection: await source.gate.run(
            () =>
              begin(source.sql, (tx) => selectNetwork(tx, sync, selectionRequest, source), {
                snapshot: true,
              }),
            signal,
          ),
        }));
        if (isNotModified(request, selection.validators, heldThroughMs))
          return sendNotModified(varied(), selection.validators);
        if (request.method === 'HEAD') return withHeaders(selection).send();
      }
      let selection: NetworkSelection | undefined;
      const interval = { from, to, aggregate: query.aggregate };
      const plan = async (source: ReadSource, tx: Queryable): Promise<DocumentPlan> => {
        const pool = source.sql;
        selection = await selectNetwork(tx, sync, selectionRequest, source);
        const tubeIds = selection.tubes.map((tube) => tube.id);
        const select =
          since === undefined
            ? acrossTubes(tubeIds, await measurementsSelect(pool, tx, LISTED_TUBE, interval))
            : sync.changedSelect({
                tubeIds,
                from,
                to,
                since,
                aggregate: await bucketingOf(pool, tx, query.aggregate),
              });
        const tubes = selection.tubes.map((tube) =>
          seriesHead(tube, { ...interval, tubeIdentifier: tube.identifier }),
        );
        const head = { from, to, aggregate: query.aggregate, syncToken: selection.syncToken };
        return {
          opening: writer.open(head, tubes),
          tubes,
          // A delta holds only the tubes it changed.
          everyTube: since === undefined,
          select,
          shape: shapeOf(query.aggregate),
        };
      };
      const body = await streamDocument(
        request,
        reply,
        options,
        (source) => ({ plan: (_pool, tx) => plan(source, tx) }),
        writer,
        coding,
      );
      // Set by the plan before the stream's first chunk, which openDocumentStream waits for.
      return withHeaders(selection!).send(body);
    },
  });
}

/**
 * The one skeleton of a streamed document response (a series, a network, the latest), written once: the format and
 * the coding negotiated, the plan read first (the validators, and what else the endpoint states in
 * headers), then HEAD, 304 or the body streamed from the plan's snapshot. An endpoint brings its plan
 * and its refusals; it never learns its headers from inside the stream.
 */
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/connect.js';
import type { Permit } from '../db/connectionGate.js';
import type { ReadSource, ReadSources } from '../db/readReplicas/readSources.js';
import { historyMark } from '../db/walHistory.js';
import { type DocumentRequest, openDocument, type Planned, readPlan } from '../engine/document.js';
import type { Format, LatestWriter, MediaFormat, SeriesWriter } from '../engine/write/writer.js';
import { attachment, fileAttachment } from './attachment.js';
import type { BudgetCache } from './budgetCache.js';
import type { BulkTurns } from './bulkTurns.js';
import { clientGoneSignal } from './clientGone.js';
import { type Coding, compressStream, negotiateCoding } from './compression.js';
import {
  isConditional,
  isNotModified,
  onHistory,
  sendNotModified,
  setValidators,
  type Validators,
} from './conditional.js';
import { NEGOTIATED_VARY, negotiate } from './negotiation.js';
import type { ServiceMetrics } from './observability/metrics.js';

/** What an endpoint's plan holds besides the document: its validators and headers of its own. */
export interface ResponsePlan extends Planned {
  validators: Validators;
  /** Headers the plan states (a network's Sync-Token), on a HEAD and a 200. */
  headers?: Readonly<Record<string, string>>;
  /** For an endpoint that keeps its documents: what the document is made from, its coding included. */
  keptAs?: string;
}

/** A whole response kept for reuse: its plan, its body as sent (coded), and the measurements in it. */
export interface KeptDocument<P extends ResponsePlan> {
  plan: P;
  body: Buffer;
  rows: number;
}

/**
 * The documents of an endpoint whose bodies are small enough to keep whole (latest): a request whose
 * plan would be made from the same things as a kept one's is answered with it, without a transaction
 * or a row read. Exact as long as `keptAsNow` and the plan's `keptAs` name everything the response
 * derives from, each as of its own snapshot.
 */
export interface DocumentKeeping<P extends ResponsePlan, W extends AnyWriter, F extends MediaFormat> {
  documents: BudgetCache<KeptDocument<P>>;
  /** What a plan read now would be kept as: one statement on `source`, in a snapshot of its own. */
  keptAsNow(source: ReadSource, negotiated: Negotiated<W, F>): Promise<string>;
}

/** A writer of a document: a series', a network's or a latest's. */
type AnyWriter = SeriesWriter | LatestWriter;

export interface StreamedDocument<
  P extends ResponsePlan,
  W extends AnyWriter,
  F extends MediaFormat = Format,
> {
  /** The kind of request, for the report of waits for a database connection: `series`, `network`, … */
  kind: string;
  /**
   * A bulk document (many tubes' measurements): its body is read through the source's bulk gate, a
   * share of the pool's connections, so that bulk streams never hold every connection, and its chunks
   * take turns with the other bulk documents' on the event loop (bulkTurns.ts).
   */
  bulk?: boolean;
  /** The formats the endpoint offers, in the order that breaks a tie of Accept's q-values. */
  offered: readonly F[];
  /** The `format` parameter, when given: it decides over Accept. */
  format: F['name'] | undefined;
  /** The writer of one response in `format`. */
  writer(format: F): W;
  /**
   * The plan, read on `tx` in the snapshot of the document it answers for; undefined for nothing. Its
   * validators tell the negotiated format and coding apart.
   */
  plan(source: ReadSource, tx: Queryable, negotiated: Negotiated<W, F>): Promise<P | undefined>;
  /** What a plan of nothing is answered with. */
  notFound(): Error;
  /** The interval of measurements its body reads, whose chunks it locks first; none for no measurements. */
  interval?: { from: string; to: string };
  /**
   * A file's name, for a format that comes as a file: `<stem>_<from>_<to>.<extension>`, or
   * `<stem>.<extension>` for a document without an interval.
   */
  file: { stem: string; from?: string; to?: string };
  /** Whole bodies kept for reuse, for an endpoint whose documents are small enough. */
  keeping?: DocumentKeeping<P, W, F>;
}

/** What the request chose: the format and its writer, and the content coding (undefined: identity). */
export interface Negotiated<W extends AnyWriter, F extends MediaFormat = Format> {
  format: F;
  writer: W;
  coding: Coding | undefined;
}

export interface StreamDependencies {
  reads: ReadSources;
  metrics: ServiceMetrics;
  /** The turns bulk documents take on the event loop. */
  turns: BulkTurns;
}

/**
 * The document of `source`, with a permit of its connection gate (its bulk gate for a bulk document)
 * for as long as it holds its pooled connection: the permit goes back with `connection.released`. Each
 * attempt takes its own permit, so a retry after a lost connection waits its turn like any request.
 */
async function openGatedDocument<P extends Planned>(
  { sql, gate, bulkGate }: ReadSource,
  metrics: ServiceMetrics,
  document: Omit<DocumentRequest<P>, 'connection'>,
  writer: AnyWriter,
  { signal, kind, turns }: { signal: AbortSignal; kind: string; turns: BulkTurns | undefined },
) {
  // Created first, so the stream gauge counts the wait at the gate as waiting.
  const use = metrics.streamConnection();
  let permit: Permit;
  try {
    permit = await (turns ? bulkGate : gate).acquire(signal, kind);
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
  return openDocument(sql, { ...document, connection, ...(turns && { beforeChunk: turns.turn }) }, writer);
}

/**
 * Gives each chunk of `body` back to `recycle` once the response's socket has sent it. The chunks piped
 * into the response before one of its 'drain' events, or its 'finish', are all written to the kernel by
 * then (a socket drains only when nothing it was given is left to write; a response finishes once its
 * last bytes are). Only on a real socket, and only for the chunks the body itself pipes into the
 * response: a consumer that keeps chunks (an injected request) never drains them.
 */
function recycleWhenSent(response: ServerResponse, body: Readable, recycle: (chunk: Buffer) => void) {
  if (!(response.socket instanceof Socket)) return;
  let piped: Buffer[] = [];
  // Listened to once the body is piped, so that the listener never starts the flow itself.
  response.on('pipe', (source) => {
    if (source === body) body.on('data', (chunk: Buffer) => piped.push(chunk));
  });
  const sent = () => {
    for (const chunk of piped) recycle(chunk);
    piped = [];
  };
  response.on('drain', sent);
  // Once its last bytes are written to the kernel: the last chunks, which no drain follows.
  response.on('finish', sent);
}

/**
 * Answers `request` with the document `endpoint` plans. HEAD and a conditional GET read the plan alone:
 * no measurement. A GET reads the plan and then the body in one snapshot, from a source it reads again
 * (elsewhere, when there is another) if the connection is lost or the source cannot answer exactly
 * before anything is sent; its rows are counted for the request log and the metrics, and a failure
 * after the first byte is logged and counted as a cut-off (Fastify then destroys the socket, and the
 * client sees an incomplete body).
 */
export async function sendDocument<P extends ResponsePlan, W extends AnyWriter, F extends MediaFormat>(
  request: FastifyRequest,
  reply: FastifyReply,
  { reads, metrics, turns }: StreamDependencies,
  endpoint: StreamedDocument<P, W, F>,
): Promise<FastifyReply> {
  const { offered, kind } = endpoint;
  if (endpoint.bulk) turns.bulkResponse(reply);
  const format =
    offered.find(({ name }) => name === endpoint.format) ?? negotiate(request.headers.accept, offered);
  const coding = negotiateCoding(request.headers['accept-encoding']);
  const writer = endpoint.writer(format);
  const negotiated = { format, writer, coding };
  // Vary on the 304 too: it says which request headers chose the representation.
  const varied = () => reply.header('Vary', NEGOTIATED_VARY);
  const withHeaders = (plan: P) => {
    setValidators(varied().type(format.mediaType), plan.validators);
    if (plan.headers) reply.headers(plan.headers);
    if (format.extension) {
      const { stem, from, to } = endpoint.file;
      const extension = format.extension;
      reply.header(
        'Content-Disposition',
        from && to ? attachment(stem, from, to, extension) : fileAttachment(stem, extension),
      );
    }
    if (coding) reply.header('Content-Encoding', coding);
    return reply;
  };
  const signal = clientGoneSignal(reply);
  request.rowsStreamed = 0;
  const onRows = (count: number) => {
    request.rowsStreamed = (request.rowsStreamed ?? 0) + count;
    metrics.measurementsStreamed(count);
  };
  /** The validators' answer to a HEAD or a conditional request; undefined when a body is to be sent. */
  const bodiless = (plan: P, heldThroughMs: number | undefined) => {
    if (isNotModified(request, plan.validators, heldThroughMs))
      return sendNotModified(varied(), plan.validators);
    if (request.method === 'HEAD') return withHeaders(plan).send();
    return undefined;
  };

  /** The plan as read on `tx`, its validators marked with the database's history (one round trip more, pipelined). */
  const planOn = async (source: ReadSource, tx: Queryable): Promise<P | undefined> => {
    const [mark, plan] = await Promise.all([historyMark(tx), endpoint.plan(source, tx, negotiated)]);
    return plan && { ...plan, validators: onHistory(plan.validators, mark) };
  };

  const { keeping } = endpoint;
  if (keeping) {
    const { kept, heldThroughMs } = await reads.read(async (source) => ({
      heldThroughMs: source.heldThroughMs(),
      kept: keeping.documents.get(
        await source.gate.run(() => keeping.keptAsNow(source, negotiated), signal, kind),
      ),
    }));
    metrics.keptDocumentLookup(kept !== undefined);
    if (kept) {
      const answered = bodiless(kept.plan, heldThroughMs);
      if (answered) return answered;
      onRows(kept.rows);
      return withHeaders(kept.plan).send(kept.body);
    }
  }

  if (request.method === 'HEAD' || isConditional(request)) {
    const { plan, heldThroughMs } = await reads.read(async (source) => ({
      // Before the read: what the source held then, it holds in the read's snapshot too.
      heldThroughMs: source.heldThroughMs(),
      plan: await source.gate.run(
        () => readPlan(source.sql, (_pool, tx) => planOn(source, tx)),
        signal,
        kind,
      ),
    }));
    if (!plan) throw endpoint.notFound();
    const answered = bodiless(plan, heldThroughMs);
    if (answered) return answered;
  }

  const opened = await reads.read((source) =>
    openGatedDocument(
      source,
      metrics,
      {
        plan: (_pool, tx) => planOn(source, tx),
        onRows,
        ...(endpoint.interval && { interval: endpoint.interval }),
      },
      writer,
      {
        signal,
        kind,
        turns: endpoint.bulk ? turns : undefined,
      },
    ),
  );
  if (!opened) throw endpoint.notFound();
  const { plan, body } = opened;
  const sent: Readable = coding ? compressStream(body, coding) : body;
  if (keeping && plan.keptAs !== undefined) {
    // Read whole before anything is sent: a failure is then an error response, not a cut-off.
    const whole = await buffer(sent);
    keeping.documents.set(plan.keptAs, { plan, body: whole, rows: request.rowsStreamed }, whole.length);
    return withHeaders(plan).send(whole);
  }
  if (writer.recycle && sent === body) recycleWhenSent(reply.raw, body, writer.recycle);
  body.once('error', (error) => {
    request.log.error({ err: error }, 'document stream failed after the first byte; response cut off');
    metrics.documentCutOff();
  });
  return withHeaders(plan).send(sent);
}

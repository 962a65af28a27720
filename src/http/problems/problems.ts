/**
 * Every error this service answers is `application/problem+json`: our own (400 … 429,
 * 500), Fastify's (unknown route, bad URL encoding, body parsing) and even the HTTP parser's (malformed
 * request, headers too large), which never reach a route and are written straight to the socket.
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, validatorCompiler } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { API_VERSION } from '../../contract.js';
import { ConnectionWaitAborted, ConnectionWaitTimeout } from '../../db/connectionGate.js';
import { isDatabaseUnavailable } from '../../db/errorCodes.js';
import { ReadsUnavailable } from '../../db/readReplicas/readSources.js';
import { compileSerializer } from '../../domain/jsonSchema.js';
import { logWhenDone } from '../observability/logging.js';
import { PROBLEM_MEDIA_TYPE, Problem } from './schema.js';

const serializeProblem = compileSerializer(Problem);

/** Only on 400: each parameter to change, by name, with its messages. */
export type ParameterErrors = Record<string, string[]>;

/** An error that is answered as it is: its status, a detail for people, and headers it needs. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
    /** Only on 400: the parameters to change and why. */
    readonly errors?: ParameterErrors,
  ) {
    super(detail);
    this.name = 'ProblemError';
  }
}

/** The `detail` of every 400 of a query its route's schema refused. */
export const INVALID_QUERY_DETAIL = 'The query parameters are not valid: see errors.';

/**
 * The 400 of a query its route's schema refused (what Fastify's validatorCompiler reports, one entry
 * per zod issue, in the order zod found them): `errors` names the parameter of each issue, the first
 * step of its path, with the issue's message. Any parameter of the schema may be named.
 */
export function invalidQuery(issues: readonly { instancePath: string; message?: string }[]): ProblemError {
  const errors: ParameterErrors = {};
  for (const { instancePath, message = '' } of issues) {
    const name = instancePath.split('/')[1] ?? '';
    errors[name] = [...(errors[name] ?? []), message];
  }
  return new ProblemError(400, INVALID_QUERY_DETAIL, {}, errors);
}

/**
 * The 400 of one parameter refused by a check the query schema cannot make (one that needs the key,
 * say): the same document as invalidQuery's, naming that parameter.
 */
export const invalidParameter = (name: string, message: string): ProblemError =>
  new ProblemError(400, INVALID_QUERY_DETAIL, {}, { [name]: [message] });

/**
 * What a route whose query schema is `schema` answers to `query`, through the same validatorCompiler:
 * its 400, or undefined for a valid query. For examples that must be what the service sends.
 */
export function refusalOf(schema: z.ZodType, query: Record<string, unknown>): ProblemError | undefined {
  const validate = validatorCompiler({ schema, method: 'GET', url: '', httpPart: 'querystring' });
  const result = validate(query) as { error?: { instancePath: string; message?: string }[] };
  return result.error ? invalidQuery(result.error) : undefined;
}

export const reasonPhrase = (status: number): string => STATUS_CODES[status] ?? 'Error';

/** The request path without its query string: the `instance` of a problem. */
export const pathOf = (url: string): string => {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
};

/** The problem document of `problem`, as answered to a request for `instance`. */
export function problemDocument(problem: ProblemError, instance?: string): Problem {
  const { status, detail, errors } = problem;
  const body: Problem = { type: 'about:blank', title: reasonPhrase(status), status, detail };
  if (instance !== undefined) body.instance = instance;
  if (errors !== undefined) body.errors = errors;
  return body;
}

function problemBody(problem: ProblemError, instance?: string): Buffer {
  // A Buffer keeps the media type exactly as set (Fastify appends a charset to JSON strings).
  return Buffer.from(serializeProblem(problemDocument(problem, instance)));
}

export function sendProblem(reply: FastifyReply, problem: ProblemError): FastifyReply {
  reply.header('API-Version', API_VERSION);
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply
    .code(problem.status)
    .type(PROBLEM_MEDIA_TYPE)
    .send(problemBody(problem, pathOf(reply.request.url)));
}

/** The methods every path supports; anything else on a known path is 405. */
export const ALLOWED_METHODS = 'GET, HEAD';

export const methodNotAllowed = (method: string) =>
  new ProblemError(405, `${method} is not supported: this API is read-only, use GET or HEAD.`, {
    Allow: ALLOWED_METHODS,
  });

export const notFound = () =>
  new ProblemError(404, 'There is no such resource. The API is described at /v1/openapi.json.');

export const forbidden = () =>
  new ProblemError(403, 'This API key may read no tube at all. Ask the operator to grant it tubes.');

/** The one 404 of the measurements endpoint: unknown, malformed and hidden tubes look the same. */
export const tubeNotFound = () =>
  new ProblemError(404, 'There is no tube with this identifier that this API key may read.');

/**
 * 503: every database connection stayed busy (slow clients holding streams) for the whole wait. By then
 * one may well be free, so the client is told to come back after about as long as it waited.
 */
export function serviceBusy(waitedMs: number): ProblemError {
  const seconds = Math.max(1, Math.ceil(waitedMs / 1000));
  return new ProblemError(
    503,
    `The service is busy: no database connection came free within ${waitedMs / 1000} s. Retry after ${seconds} s.`,
    { 'Retry-After': String(seconds) },
  );
}

/** Seconds a client is told to wait when the database is not reachable: a switch-over takes seconds. */
export const DATABASE_UNAVAILABLE_RETRY_SECONDS = 1;

/**
 * 503: the database this request needs did not take its query (unreachable, restarting, read-only, no
 * primary among DATABASE_URL's hosts): an operations event, not a fault of the request or of ours.
 */
export const databaseUnavailable = () =>
  new ProblemError(
    503,
    `The database is not available at the moment. Retry after ${DATABASE_UNAVAILABLE_RETRY_SECONDS} s.`,
    { 'Retry-After': String(DATABASE_UNAVAILABLE_RETRY_SECONDS) },
  );
/**
 * 503: no read replica could serve the read, and READ_FALLBACK keeps it off the primary (or the
 * replicas had not replayed what the client's sync token saw, within the wait).
 */
export function readsUnavailable(error: ReadsUnavailable): ProblemError {
  const seconds = error.retryAfterSeconds;
  const detail =
    error.reason === 'no-replica'
      ? `No database replica can serve reads right now. Retry after ${seconds} s.`
      : `No database replica has caught up with changedSince yet. Retry after ${seconds} s.`;
  return new ProblemError(503, detail, { 'Retry-After': String(seconds) });
}

/** A request that waited for a database connection in vain, or whose client left while it waited. */
function connectionNotGiven(error: ConnectionWaitTimeout | ConnectionWaitAborted, request: FastifyRequest) {
  // A client that left reads no answer: its request line (status, complete: false) is all there is.
  if (error instanceof ConnectionWaitTimeout) {
    request.log.warn(
      { waitedMs: error.waitedMs, connections: error.counts },
      'no database connection came free in time: answered 503',
    );
  }
  return serviceBusy(error.waitedMs);
}

/** A fault of ours: nothing about internals, only the request id that finds it in the log. */
export const unexpectedError = (requestId: string) =>
  new ProblemError(
    500,
    `An unexpected error occurred. If it persists, tell the operator this request id: ${requestId}.`,
  );

/**
 * Errors that reach the error handler. A query its route's zod schema refused is a 400 that names each
 * parameter (invalidQuery). Fastify's own client errors (FST_ERR_*) describe the request,
 * so their message is shown; anything else is a fault of ours: logged in full with the request id,
 * answered without a word about internals.
 */
function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ProblemError) return sendProblem(reply, error);
  if (error.validationContext === 'querystring' && hasZodFastifySchemaValidationErrors(error)) {
    return sendProblem(reply, invalidQuery(error.validation));
  }
  if (error instanceof ConnectionWaitTimeout || error instanceof ConnectionWaitAborted) {
    return sendProblem(reply, connectionNotGiven(error, request));
  }
  if (isDatabaseUnavailable(error)) {
    // Logged, as for a 500, with the driver's words; the client learns only when to retry.
    request.log.warn({ err: error }, 'the database did not take the query: answered 503');
    return sendProblem(reply, databaseUnavailable());
  }
  if (error instanceof ReadsUnavailable) {
    request.log.warn({ reason: error.reason }, `${error.message}: answered 503`);
    return sendProblem(reply, readsUnavailable(error));
  }
  const status = error.statusCode ?? 500;
  if (error.code?.startsWith('FST_') && status >= 400 && status < 500) {
    return sendProblem(reply, new ProblemError(status, error.message));
  }
  request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, unexpectedError(request.id));
}

/**
 * Requests Node would answer itself with a bare status, no body and no API-Version: an Expect other
 * than 100-continue (417) and an HTTP/1.1 request without Host (400, RFC 9112 section 3.2). Both are
 * let through to Fastify (the `checkExpectation` listener, `requireHostHeader: false` in app.ts) and
 * refused here as problems, logged under a request id like every other response.
 */
const unmetExpectations = new WeakSet<IncomingMessage>();

export const expectationFailed = () =>
  new ProblemError(417, 'This server meets no expectation but 100-continue: leave out Expect.');

function refuseWhatNodeWould(request: FastifyRequest): void {
  if (unmetExpectations.has(request.raw)) {
    throw expectationFailed();
  }
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
    throw new ProblemError(400, 'An HTTP/1.1 request must carry a Host header (RFC 9112).');
  }
}

/**
 * The route patterns of each app, collected as routes are added: requests the router never sees (a
 * method the HTTP parser does not know, CONNECT) are matched against them, so every route, wherever it
 * is registered, counts as a known path without a list kept elsewhere.
 */
const routePatterns = new WeakMap<FastifyInstance, RegExp[]>();

/** `:name` segments match one non-empty segment and a trailing `*` anything, as the router matches them. */
const routePattern = (url: string) =>
  new RegExp(`^${url.replace(/[.]/g, '\\.').replace(/:\w+/g, '[^/]+').replace(/\*$/, '.*')}$`);

function isKnownPath(app: FastifyInstance, path: string): boolean {
  return routePatterns.get(app)?.some((pattern) => pattern.test(path)) ?? false;
}

export function registerProblems(app: FastifyInstance): void {
  const patterns: RegExp[] = [];
  routePatterns.set(app, patterns);
  app.addHook('onRoute', (route) => {
    patterns.push(routePattern(route.url));
  });
  app.setErrorHandler(handleError);
  // A route may find nothing after all (@fastify/static, for a file that is not there) and call
  // reply.callNotFound(), which runs this handler but no onRequest hook.
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, notFound()));
  // The root onRequest hook runs before any body is read, so an unknown path is 404 before a body of
  // an unknown media type could make it 415 (the route is checked first).
  // Callback style: an async hook costs every request a promise and a microtask turn.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      refuseWhatNodeWould(request);
      done(request.is404 ? notFound() : undefined);
    } catch (error) {
      done(error as Error);
    }
  });
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => answerConnect(app, request, socket));
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    unmetExpectations.add(request);
    app.server.emit('request', request, response);
  });
}

/** Errors Fastify raises before routing (Fastify option `frameworkErrors`). */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // No hook has run for this request: give it what the hooks give every other one.
  reply.header('X-Request-Id', request.id);
  logWhenDone(request, reply);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    // Only a tube identifier is a path parameter; one this long is malformed, and malformed is 404.
    return sendProblem(reply, tubeNotFound());
  }
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
  const detail =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The request path is not valid percent-encoding (RFC 3986).'
      : reasonPhrase(status);
  return sendProblem(reply, new ProblemError(status, detail));
}

/** A problem written to a bare socket, for requests the HTTP parser refused before Fastify saw them. */
export function writeRawProblem(socket: Duplex, problem: ProblemError, instance?: string): void {
  if (!socket.writable) return;
  const body = problemBody(problem, instance);
  const head = [
    `HTTP/1.1 ${problem.status} ${reasonPhrase(problem.status)}`,
    `Content-Type: ${PROBLEM_MEDIA_TYPE}`,
    `Content-Length: ${body.length}`,
    `API-Version: ${API_VERSION}`,
    'Connection: close',
    ...Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]), () => socket.destroy());
}

/** The request line of a request whose method the HTTP parser does not know (`PURGEX /path HTTP/1.1`). */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^ ?\r\n]*)\S* HTTP\/1\.[01]\r\n/;

/** A method on a path: 405 where the path exists, 404 where it does not. */
function unsupportedMethod(app: FastifyInstance, method: string, path: string): ProblemError {
  return isKnownPath(app, path) ? methodNotAllowed(method) : notFound();
}

/** Fastify option `clientErrorHandler`: what the HTTP parser rejects (as Node itself would, in our format). */
export function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (error.code === 'HPE_INVALID_METHOD' && Buffer.isBuffer(error.rawPacket)) {
    // A syntactically valid method Node does not know (or a lower-case `get`): still a method on a path.
    const line = REQUEST_LINE.exec(error.rawPacket.toString('latin1'));
    if (line) {
      writeRawProblem(socket, unsupportedMethod(this, line[1]!, line[2]!), line[2]);
      return;
    }
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    writeRawProblem(
      socket,
      new ProblemError(431, 'The request headers are larger than this server accepts.'),
    );
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    writeRawProblem(socket, new ProblemError(408, 'The request did not arrive in time.'));
  } else {
    writeRawProblem(socket, new ProblemError(400, 'The request is not valid HTTP/1.1.'));
  }
}

/** CONNECT never reaches the router (Node hands it to the `connect` event); it is another method too. */
function answerConnect(app: FastifyInstance, request: IncomingMessage, socket: Duplex): void {
  const path = pathOf(request.url ?? '');
  writeRawProblem(socket, unsupportedMethod(app, 'CONNECT', path), path);
}

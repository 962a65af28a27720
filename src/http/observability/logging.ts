/**
 * Logs: pino JSON lines (or readable lines for a person: LOG_FORMAT), one per request (id, route, status, duration, key id, rows streamed), plus
 * errors with their request id. An API key must never appear in a line: headers are not
 * logged, the header path is redacted should anything log headers, and as a last guard every line is
 * scrubbed of anything shaped like a key (a key pasted into a URL would otherwise be logged with it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type DestinationStream, type Logger, pino } from 'pino';
import type { Settings } from '../../config.js';
import { whenResponseClosed } from '../responseClosed.js';
import { synchronousLines } from './synchronousLines.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Measurements written to the response, for the request log line. */
    rowsStreamed: number | null;
  }
}

/** `gw_` and a long run of base64url: a key, or most of one (src/keys/format.ts). */
const KEY_PREFIX = 'gw_';
const KEY_LIKE = /gw_[A-Za-z0-9_-]{16,}/g;
/**
 * Any value of `api_key` (the key where only a URL could carry it, `/v1/ogc`), on any path: a mistyped
 * key is still most of a key. Its name as sent, in any case, `_` escaped or not; the value up to the
 * next parameter, or the end of the URL in a JSON string (escaped quotes included).
 */
const KEY_PARAMETER = /key=/i;
const KEY_PARAMETER_VALUE = /(api(?:_|%5f)key=)(?:\\.|[^&#\s"\\])*/gi;

/** A line without any key in it: the last guard of every line written. */
export function scrubKeys(line: string): string {
  let scrubbed = line.includes(KEY_PREFIX) ? line.replace(KEY_LIKE, 'gw_[redacted]') : line;
  if (KEY_PARAMETER.test(scrubbed)) scrubbed = scrubbed.replace(KEY_PARAMETER_VALUE, '$1[redacted]');
  return scrubbed;
}

/**
 * Standard output, each line written at once (synchronousLines.ts). pino's default destination hands
 * each line to a write on libuv's thread pool (and a wake-up of the event loop when it is done), and its
 * batching (`minLength`) measures the whole pending batch again on every line; either costs a cached
 * discovery request more server CPU (docs/decisions/0013-per-request-costs.md). A line written at once is
 * also never lost when the process dies and never waits to be seen.
 */
const standardOutput = () => synchronousLines(1);

export type LogFormat = NonNullable<Settings['LOG_FORMAT']>;

/** LOG_FORMAT when set; otherwise readable lines for a person at a terminal, JSON lines for the rest. */
export const chooseLogFormat = (setting: Settings['LOG_FORMAT'], terminal: boolean): LogFormat =>
  setting ?? (terminal ? 'pretty' : 'json');

const REQUEST_MESSAGE = 'request';

/** The fields of logWhenDone's line that its pretty form writes as text; the rest stay as JSON. */
const REQUEST_LINE_FIELDS = ['method', 'url', 'route', 'status', 'durationMs', 'rows', 'complete'];

/** `GET /v1/… 200 12.3 ms, 2880 rows`, and `incomplete` when the response was not written whole. */
function requestLine(record: Record<string, unknown>): string {
  const rows = typeof record.rows === 'number' ? `, ${record.rows} rows` : '';
  const incomplete = record.complete === false ? ', incomplete' : '';
  return `${record.method} ${record.url} ${record.status} ${record.durationMs} ms${rows}${incomplete}`;
}

/**
 * Standard output in `format`. Pretty lines are made in process from each finished JSON line, so they
 * are written at once like JSON lines (a pino transport would write them from a worker thread), and
 * they are made from the line after its scrub: what a person sees holds no key either. pino-pretty is
 * loaded only then, never by a service that logs JSON.
 */
export async function logDestination(format: LogFormat): Promise<DestinationStream> {
  if (format === 'json') return standardOutput();
  const { prettyFactory } = await import('pino-pretty');
  const prettify = prettyFactory({
    ignore: `pid,hostname,${REQUEST_LINE_FIELDS.join(',')}`,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    messageFormat: (record, messageKey) =>
      record[messageKey] === REQUEST_MESSAGE ? requestLine(record) : String(record[messageKey] ?? ''),
  });
  const lines = standardOutput();
  return { write: (line: string) => lines.write(prettify(line)) };
}

/**
 * The service's logger, shared by the app and the parts it depends on (the limits report Redis
 * failing and returning through it), so every line has one format and passes the same scrub.
 * Standard output unless `stream` is given (tests read the lines).
 */
export function createLogger(level: Settings['LOG_LEVEL'], stream?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'], censor: '[redacted]' },
      // The search for the prefix alone is far cheaper than running the pattern over every line
      // (docs/decisions/0013-per-request-costs.md).
      hooks: { streamWrite: scrubKeys },
    },
    stream ?? standardOutput(),
  );
}

/**
 * One line per request, written when the response is over (complete, failed or abandoned), through the
 * request's logger: it names the request id, and has the route's own level where a route sets one (the
 * health checks: warn).
 */
export function logWhenDone(request: FastifyRequest, reply: FastifyReply): void {
  whenResponseClosed(reply.raw, () => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        route: request.is404 ? null : (request.routeOptions.url ?? null),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        keyId: request.client?.keyId ?? null,
        rows: request.rowsStreamed,
        // false: the client left, or the stream was cut, before the whole response was written
        complete: reply.raw.writableFinished,
      },
      REQUEST_MESSAGE,
    );
  });
}

export function registerRequestLog(app: FastifyInstance): void {
  app.decorateRequest('rowsStreamed', null);
  app.addHook('onRequest', (request, reply, done) => {
    logWhenDone(request, reply);
    done();
  });
}

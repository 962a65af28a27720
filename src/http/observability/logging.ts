/**
 * Logs: pino JSON lines, one per request (id, route, status, duration, key id, rows streamed), plus
 * errors with their request id. An API key must never appear in a line (decisions.md): headers are not
 * logged, the header path is redacted should anything log headers, and as a last guard every line is
 * scrubbed of anything shaped like a key (a key pasted into a URL would otherwise be logged with it).
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';
import { type DestinationStream, type LogFn, type Logger, pino } from 'pino';
import type { Settings } from '../../config.js';
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
 * Standard output, one synchronous write per line (synchronousLines.ts: what pino's synchronous
 * destination does, for less per line). pino's default destination hands each line to a
 * write on libuv's thread pool (and a wake-up of the event loop when it is done), and its batching
 * (`minLength`) measures the whole pending batch again on every line; either cost a cached discovery
 * request more server CPU than writing its line at once (paired rounds, bench/README.md). A line
 * written at once is also never lost when the process dies and never waits to be seen. The price: a
 * reader of standard output that stops reading stalls the process (a buffer would fill its memory).
 */
const standardOutput = () => synchronousLines(1);

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
      // The search for the prefix alone is far cheaper than running the pattern over every line.
      hooks: {
        streamWrite: (line: string) =>
          line.includes(KEY_PREFIX) ? line.replace(KEY_LIKE, 'gw_[redacted]') : line,
      },
    },
    stream ?? standardOutput(),
  );
}

/**
 * One line per request, written when the response is over (complete, failed or abandoned). Through the
 * root logger, naming the request id itself, so that no request needs a child logger of its own; a
 * route with a log level of its own (the health checks: warn) writes it through its request's logger,
 * which has that level and names the id.
 */
export function logWhenDone(request: FastifyRequest, reply: FastifyReply): void {
  reply.raw.once('close', () => {
    // Read once: Fastify builds this object anew on every access.
    const { url: route, logLevel } = request.routeOptions;
    const ownLevel = logLevel !== ''; // '' unless the route has a level of its own
    (ownLevel ? request.log : request.server.log).info(
      {
        reqId: ownLevel ? undefined : request.id, // undefined: left out of the line
        method: request.method,
        url: request.url,
        route: request.is404 ? null : (route ?? null),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        keyId: request.client?.keyId ?? null,
        rows: request.rowsStreamed,
        // false: the client left, or the stream was cut, before the whole response was written
        complete: reply.raw.writableFinished,
      },
      'request',
    );
  });
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * `request.log`: the pino child that carries the request id, made only when something logs through it
 * (a warning or an error, which few requests have). Fastify's default makes one for every request, and
 * pino formats its bindings each time: ~3 µs of a cached discovery request (perf), for a logger that the
 * request's own line (logWhenDone) does not need.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  get level(): string {
    return this.logger.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  declare silent: LogFn;

  // On the prototype, not as fields: nothing is made per request but the object itself.
  static {
    for (const level of LEVELS) {
      LazyRequestLogger.prototype[level] = function log(this: LazyRequestLogger, ...args: unknown[]) {
        (this.logger[level] as (...args: unknown[]) => void)(...args);
      };
    }
  }
}

/** Fastify's `childLoggerFactory`: each request's logger, made lazily (LazyRequestLogger). */
export const lazyRequestLogger = (
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger => new LazyRequestLogger(parent, bindings, options);

export function registerRequestLog(app: FastifyInstance): void {
  app.decorateRequest('rowsStreamed', null);
  app.addHook('onRequest', (request, reply, done) => {
    logWhenDone(request, reply);
    done();
  });
}

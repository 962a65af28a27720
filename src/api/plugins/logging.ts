/**
 * Logs: pino JSON lines, one per request (id, route, status, duration, key id, rows streamed), plus
 * errors with their request id. An API key must never appear in a line (decisions.md): headers are not
 * logged, the header path is redacted should anything log headers, and as a last guard every line is
 * scrubbed of anything shaped like a key (a key pasted into a URL would otherwise be logged with it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type DestinationStream, type Logger, pino } from 'pino';
import type { Settings } from '../../config.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Measurements written to the response, for the request log line. */
    rowsStreamed: number | null;
  }
}

/** `gw_` and a long run of base64url: a key, or most of one (src/domain/apiKeys.ts). */
const KEY_LIKE = /gw_[A-Za-z0-9_-]{16,}/g;

/** pino's level number for `warn`: lines at this level or above are written out at once. */
const WARN = 40;

/**
 * Standard output, written in batches of at least 4 KiB (pino's "asynchronous logging"): pino's
 * default destination hands every line to a write of its own on libuv's thread pool, one per request
 * (in one paired measurement ~17 µs of a cached discovery request's ~112 µs of server CPU; the
 * machine's noise is of the same order, bench/README.md). A batch waits at most FLUSH_MS, so a quiet service
 * still shows each request within a second; warnings and errors are written at once (createLogger),
 * and pino writes out what is left when the process exits.
 */
const FLUSH_MS = 1000;
const standardOutput = () =>
  pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: FLUSH_MS });

/**
 * The service's logger, shared by the app and the parts it depends on (the limits report Redis
 * failing and returning through it), so every line has one format and passes the same scrub.
 * Standard output unless `stream` is given (tests read the lines).
 */
export function createLogger(level: Settings['LOG_LEVEL'], stream?: DestinationStream): Logger {
  const batched = stream === undefined;
  const destination = stream ?? standardOutput();
  return pino(
    {
      level,
      redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'], censor: '[redacted]' },
      hooks: {
        streamWrite: (line: string) => line.replace(KEY_LIKE, 'gw_[redacted]'),
        logMethod(args, write, levelNumber) {
          write.apply(this, args);
          if (batched && levelNumber >= WARN) this.flush();
        },
      },
    },
    destination,
  );
}

/** One line per request, written when the response is over (complete, failed or abandoned). */
export function logWhenDone(request: FastifyRequest, reply: FastifyReply): void {
  reply.raw.once('close', () => {
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
      'request',
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

/**
 * Request metrics: every response counted when it is over (complete, failed or cut off), streams while
 * they run, 429s by reason, and 503s for want of a database connection. Hooks only: routes know nothing
 * of metrics except the stream path's rows and connection (src/v1/series/route.ts).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConnectionWaitTimeout } from '../../db/connectionGate.js';
import { LimitRefusal } from '../hooks/admitClient.js';
import { whenResponseClosed } from '../responseClosed.js';
import { type ServiceMetrics, UNMATCHED_ROUTE } from './metrics.js';

/** The `route` label: the route's pattern (metrics.ts says why). */
const routeLabel = (request: FastifyRequest): string =>
  request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);

export function registerRequestMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    // The socket outlives the response (keep-alive), so what this response wrote is the difference.
    const socket = request.raw.socket;
    const writtenBefore = socket.bytesWritten;
    whenResponseClosed(reply.raw, () => {
      metrics.responseDone(
        { method: request.method, route: routeLabel(request), status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
        socket.bytesWritten - writtenBefore,
      );
    });
    done();
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    if (payload instanceof Readable) whenResponseClosed(reply.raw, metrics.streamStarted());
    done(null, payload);
  });

  app.addHook('onError', async (_request, _reply, error) => {
    if (error instanceof LimitRefusal) metrics.limited(error.reason);
    if (error instanceof ConnectionWaitTimeout) metrics.connectionWaitTimedOut();
  });
}

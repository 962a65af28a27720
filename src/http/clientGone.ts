/** A request's waits end when its client goes away: nobody would read what they wait for. */
import type { FastifyReply } from 'fastify';
import { whenResponseClosed } from './responseClosed.js';

/**
 * Aborts when the response closes before it was sent whole: the connection is gone (at once when it is
 * gone already). A response that closes complete aborts nothing: nothing waits any more by then, and
 * each abort builds a DOMException with its stack, a cost a cached discovery request would notice
 * (docs/decisions/0013-per-request-costs.md).
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  whenResponseClosed(reply.raw, () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** A request's waits end when its client goes away: nobody would read what they wait for. */
import type { FastifyReply } from 'fastify';
import { whenResponseClosed } from './responseClosed.js';

/**
 * Aborts when the response closes: before it was sent, that means the connection is gone (at once when
 * it is gone already). It closes after a complete response too; by then nothing listens any more.
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  whenResponseClosed(reply.raw, () => controller.abort());
  return controller.signal;
}

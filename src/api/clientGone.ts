/** A request's waits end when its client goes away: nobody would read what they wait for. */
import type { FastifyReply } from 'fastify';

/**
 * Aborts when the response closes: before it was sent, that means the connection is gone. (It closes
 * after a complete response too; by then nothing listens any more.)
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  if (reply.raw.destroyed) controller.abort();
  else reply.raw.once('close', () => controller.abort());
  return controller.signal;
}

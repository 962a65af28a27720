/**
 * Graceful close of a listening app (SIGTERM): accept no more connections, let running responses
 * finish for up to `graceMs`, then cut those still running.
 *
 * Readiness fails from the first moment (buildApp's preClose hook), and the listener closes at once:
 * a load balancer's next check, or a request of its on a new connection, is refused, and it sends
 * traffic elsewhere. A request that still arrives on a connection that was busy when the close began
 * is served, with `Connection: close` (Fastify adds it while closing).
 *
 * Node's server.close() closes only the connections idle at that moment; a keep-alive connection whose
 * response ends later would stay open until its keep-alive timeout (72 s in Fastify) and hold the close
 * up. So while draining, connections are closed as soon as they fall idle. At the deadline the sockets
 * still open are destroyed: their clients see an incomplete response (a chunked body without its end),
 * never a short one that looks complete, and each cut stream gives back its connection and slot.
 */
import type { FastifyInstance } from 'fastify';

/** How often idle keep-alive connections are looked for while draining. */
const IDLE_SWEEP_MS = 100;

export interface CloseOutcome {
  /** Whether responses were still running at the deadline and were cut off. */
  cut: boolean;
  /** Milliseconds from the start of the close until the last connection was gone. */
  drainedMs: number;
}

export async function closeGracefully(app: FastifyInstance, graceMs: number): Promise<CloseOutcome> {
  const server = app.server;
  const started = performance.now();
  let cut = false;
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const deadline = setTimeout(() => {
    cut = true;
    server.getConnections((_error, count) => {
      app.log.warn(
        { connections: count, graceMs },
        'shutdown deadline reached: cutting responses still running',
      );
    });
    server.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
  return { cut, drainedMs: Math.round(performance.now() - started) };
}

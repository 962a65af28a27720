/**
 * The connection gates of the app (src/db/connectionGate.ts): one per pool, each as large as the pool
 * (DATABASE_POOL_MAX) with the wait of DATABASE_WAIT_SECONDS. Key lookups use the reads' gate when they
 * share its pool, and a gate of their own when they have their own pool (read replicas for the rest,
 * each with a gate of its own).
 */
import type { Settings } from '../config.js';
import { ConnectionGate, type GateCounts } from '../db/connectionGate.js';
import type { ServiceMetrics } from './observability/metrics.js';

export interface ConnectionGates {
  /** Wells, tubes and series. */
  gate: ConnectionGate;
  /** API key lookups (and reads that fall back to the primary). */
  keysGate: ConnectionGate;
  /** One per read replica, in DATABASE_READ_URL's order. */
  replicaGates: ConnectionGate[];
}

export function connectionGates(
  settings: Pick<Settings, 'DATABASE_POOL_MAX' | 'DATABASE_WAIT_SECONDS'>,
  metrics: Pick<ServiceMetrics, 'connectionGate'>,
  keysShareThePool: boolean,
  replicas = 0,
): ConnectionGates {
  const gates: ConnectionGate[] = [];
  // The gauge shows the pools together: what matters to an operator is whether requests wait at all.
  const report = () =>
    metrics.connectionGate(
      gates.reduce<GateCounts>(
        (sum, gate) => {
          const counts = gate.counts();
          return { held: sum.held + counts.held, waiting: sum.waiting + counts.waiting };
        },
        { held: 0, waiting: 0 },
      ),
    );
  const newGate = () => {
    const gate = new ConnectionGate({
      size: settings.DATABASE_POOL_MAX,
      waitMs: settings.DATABASE_WAIT_SECONDS * 1000,
      onChange: report,
    });
    gates.push(gate);
    return gate;
  };
  const gate = newGate();
  return {
    gate,
    keysGate: keysShareThePool ? gate : newGate(),
    replicaGates: Array.from({ length: replicas }, newGate),
  };
}

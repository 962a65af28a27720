/**
 * Where a request reads: a usable read replica of DATABASE_READ_URL, or the fallback (READ_FALLBACK),
 * or DATABASE_URL alone when no replica is configured. Each source is a pool with its connection gate,
 * so a route reads the same way wherever it reads: `reads.read((source) => source.gate.run(…))`.
 *
 * A read runs again elsewhere, before anything is sent, when its source lost the connection, or could
 * not answer exactly (SourceBehind: a sync token from a snapshot the replica has not replayed yet). Such
 * a read waits briefly for the replicas, then goes to the primary if READ_FALLBACK allows, else it is a
 * 503 with Retry-After.
 */
import type { Sql } from '../connect.js';
import type { ConnectionGate } from '../connectionGate.js';
import { mayTryElsewhere } from '../errorCodes.js';
import { retryIfConnectionLost } from '../retry.js';
import type { ReplicaMonitor, ReplicaStatus } from './monitor.js';

export interface ReadSource {
  /** `host:port` of a replica; `primary` for DATABASE_URL. */
  name: string;
  sql: Sql;
  gate: ConnectionGate;
  /** A share of `gate`'s places (BULK_CONNECTIONS) that bulk documents pass first. */
  bulkGate: ConnectionGate;
  /** A replica, whose data may be behind the primary's. */
  replica: boolean;
  /**
   * The primary's clock (ms since the epoch) up to which this source holds every committed change, as
   * known before the read began: Infinity for the primary, undefined when not known.
   */
  heldThroughMs(): number | undefined;
}

/** READ_FALLBACK: where reads go when no replica is usable. */
export type ReadFallback = 'primary' | 'unavailable';

/** The source could not answer this request exactly: its replay is behind what the request has seen. */
export class SourceBehind extends Error {
  constructor(
    /**
     * Throws the request's own refusal when the primary itself has not seen it all (a sync token from a
     * restored backup's past): asked before a 503, which no wait would ever end.
     */
    readonly checkPrimary: (primary: Sql) => Promise<void>,
  ) {
    super('the read source has not replayed what the request has already seen');
    this.name = 'SourceBehind';
  }
}

/** No source could serve the read (503 with Retry-After): `reason` says which case. */
export class ReadsUnavailable extends Error {
  constructor(
    readonly reason: 'no-replica' | 'replicas-behind',
    readonly retryAfterSeconds: number,
  ) {
    super(
      reason === 'no-replica'
        ? 'no read replica is usable and READ_FALLBACK is unavailable'
        : 'no read replica has replayed what the request has seen yet',
    );
    this.name = 'ReadsUnavailable';
  }
}

/** How long a read a replica answered SourceBehind waits for one to catch up, in all. */
export const BEHIND_WAIT_MS = 1000;
/** Between two rounds over the replicas while waiting. */
const BEHIND_POLL_MS = 100;
/** Retry-After of a read no replica could serve: the monitor's view changes each second. */
const NO_REPLICA_RETRY_SECONDS = 5;
const BEHIND_RETRY_SECONDS = 1;

export interface ReadSources {
  /** Every source a read may go to: the replicas in the URL's order, then the primary if it may serve. */
  readonly sources: readonly ReadSource[];
  /** Runs `work` on a source, and again on another as the module comment says. */
  read<T>(work: (source: ReadSource) => Promise<T>): Promise<T>;
  /** Each replica of DATABASE_READ_URL with the monitor's view of it (none without replicas). */
  replicas(): { name: string; status: ReplicaStatus }[];
  /** Whether reads go to the primary when no replica is usable (always, without replicas). */
  readonly fallsBackToPrimary: boolean;
}

/** DATABASE_URL alone: every read there; a lost connection is tried again once. */
export function primaryReads(source: ReadSource, onRead?: (source: ReadSource) => void): ReadSources {
  return {
    sources: [source],
    async read(work) {
      const answer = await retryIfConnectionLost(() => work(source));
      onRead?.(source);
      return answer;
    },
    replicas: () => [],
    fallsBackToPrimary: true,
  };
}

export interface ReplicaReadsOptions {
  /** In DATABASE_READ_URL's order. */
  replicas: readonly ReadSource[];
  /** DATABASE_URL, the keys' pool. */
  primary: ReadSource;
  monitor: Pick<ReplicaMonitor, 'status'>;
  fallback: ReadFallback;
  /** `random`: reads spread over the usable replicas; `disable`: the first usable in the URL's order. */
  loadBalance: 'random' | 'disable';
  /** Told each read a source answered, and each refused one. */
  onRead?: (source: ReadSource) => void;
  onUnavailable?: (error: ReadsUnavailable) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const hasFreeConnection = ({ gate }: ReadSource) => {
  const { held, waiting } = gate.counts();
  return held < gate.size && waiting === 0;
};

/** `sources` from a random one on, wrapping around. */
function rotated<T>(sources: T[]): T[] {
  const first = Math.floor(Math.random() * sources.length);
  return [...sources.slice(first), ...sources.slice(0, first)];
}

/** Reads over the replicas of DATABASE_READ_URL, with the monitor's view of each. */
export function replicaReads(options: ReplicaReadsOptions): ReadSources {
  const { monitor, replicas, primary } = options;
  const usable = (status: ReplicaStatus) => status.state === 'usable';

  /**
   * The usable replicas in the order to try them: the URL's order, or at random with those that have a
   * free connection first. A read sent to a replica whose connections all hold slow clients' streams
   * would wait there, and be refused after DATABASE_WAIT_SECONDS, while another replica idles.
   */
  function replicaOrder(): ReadSource[] {
    const found = replicas.filter((source) => usable(monitor.status(source.name)));
    if (options.loadBalance === 'disable' || found.length < 2) return found;
    const free = found.filter(hasFreeConnection);
    return [...rotated(free), ...rotated(found.filter((source) => !free.includes(source)))];
  }

  const fallback = options.fallback === 'primary' ? [primary] : [];

  const refuse = (behind: boolean): never => {
    const refusal = behind
      ? new ReadsUnavailable('replicas-behind', BEHIND_RETRY_SECONDS)
      : new ReadsUnavailable('no-replica', NO_REPLICA_RETRY_SECONDS);
    options.onUnavailable?.(refusal);
    throw refusal;
  };

  async function read<T>(work: (source: ReadSource) => Promise<T>): Promise<T> {
    const waitUntil = performance.now() + BEHIND_WAIT_MS;
    let behind: SourceBehind | undefined;
    let unreachable: unknown;
    for (;;) {
      const waited = performance.now() >= waitUntil;
      const order = replicaOrder();
      // The primary after the replicas, but for a read they are behind on only once they had their time.
      const candidates = !behind || waited || order.length === 0 ? [...order, ...fallback] : order;
      for (const source of candidates) {
        try {
          const answer = await retryIfConnectionLost(() => work(source));
          options.onRead?.(source);
          return answer;
        } catch (error) {
          if (error instanceof SourceBehind) behind = error;
          else if (mayTryElsewhere(error)) unreachable = error;
          else throw error;
        }
      }
      if (behind && !waited) {
        await sleep(BEHIND_POLL_MS);
        continue;
      }
      // The primary's own failure is its error, as with one pool; a replica's is the replicas' 503.
      if (unreachable !== undefined && !behind && candidates.at(-1) === primary) throw unreachable;
      // Without the fallback the primary answered nothing: it still says whether the wait can ever end.
      if (behind && fallback.length === 0) {
        const { checkPrimary } = behind;
        await primary.gate.run(
          () => retryIfConnectionLost(() => checkPrimary(primary.sql)),
          undefined,
          'sync',
        );
      }
      return refuse(behind !== undefined);
    }
  }

  return {
    sources: [...replicas, ...fallback],
    read,
    replicas: () => replicas.map(({ name }) => ({ name, status: monitor.status(name) })),
    fallsBackToPrimary: fallback.length > 0,
  };
}

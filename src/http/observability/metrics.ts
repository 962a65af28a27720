/**
 * The service's Prometheus metrics, one registry per app (tests run several apps in one process).
 *
 * Labels are bounded and say nothing about a client: the route is the pattern
 * (`/v1/groundwater-monitoring-tubes/:tubeIdentifier/measurements`), never the path a client sent, and
 * no key, key id or tube identifier is ever a label: a key never appears in a metric.
 *
 * Database connections are counted here, in process, where the stream path takes and gives back the
 * connection it holds for a whole response: postgres.js exposes no pool statistics, and counting rows
 * of pg_stat_activity on each scrape would cost a query that waits behind a full pool exactly when the
 * number matters (and would count every replica sharing an application_name). Every use of the pool,
 * short queries too, passes the connection gate (src/db/connectionGate.ts), whose counts are exported
 * as they change; a request that waited there in vain is a 503, counted apart.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GateCounts } from '../../db/connectionGate.js';
import { REPLICA_STATES } from '../../db/readReplicas/monitor.js';
import type { ReadSource, ReadSources, ReadsUnavailable } from '../../db/readReplicas/readSources.js';
import type { ClientLimits, LimitsState } from '../../limits/types.js';
import { createResponseTally } from './responseTally.js';

export interface MetricsSources {
  /** Asked on each scrape where the limits are kept (the Redis state). */
  limits: ClientLimits;
  /** DATABASE_POOL_MAX, so that dashboards can show connections in use against it. */
  poolMax: number;
}

/** A series stream's use of a pooled connection: created waiting for one, then held, then released. */
export interface ConnectionUse {
  held(): void;
  released(): void;
}

export const UNMATCHED_ROUTE = 'unmatched';

const LIMITS_STATES: LimitsState[] = ['in-process', 'shared', 'fallback'];

/** Seconds; streams of a year take seconds to minutes, everything else milliseconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Seconds; a wait is nothing at all when a connection is free, and at most DATABASE_WAIT_SECONDS. */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The kinds of request that wait for a connection, exported from the start. */
export const WAIT_KINDS = ['key', 'discovery', 'series', 'network', 'latest', 'sync'] as const;

export type ServiceMetrics = ReturnType<typeof createMetrics>;

export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];

  // One line per metric: name, help, labels.
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers });

  const responses = createResponseTally(registry, {
    requests: {
      name: 'gwapi_http_requests_total',
      help: 'HTTP responses by method, route pattern and status, counted when each is over (complete or cut off).',
    },
    duration: {
      name: 'gwapi_http_request_duration_seconds',
      help: 'Time from request to the end of its response (the whole streamed body), by method, route pattern and status.',
      buckets: DURATION_BUCKETS,
    },
    bytes: {
      name: 'gwapi_http_response_bytes_total',
      help: 'Bytes written to client connections (headers and body), by route pattern.',
    },
  });
  const measurements = counter(
    'gwapi_measurements_streamed_total',
    'Measurements written to series responses.',
  );
  const activeStreams = gauge('gwapi_active_streams', 'Streamed responses (series) being sent right now.');
  const cutOff = counter(
    'gwapi_series_cut_off_total',
    'Series responses cut off after their first byte because reading the series failed (not clients that left).',
  );
  const limited = counter(
    'gwapi_rate_limited_total',
    'Requests refused with 429, by reason: rate (token bucket), concurrency, failed-auth (per address).',
    ['reason'],
  );
  const keyCache = counter(
    'gwapi_key_cache_lookups_total',
    'API key lookups by result: hit (answered from the in-process cache) or miss (asked the database).',
    ['result'],
  );
  const keptDocuments = counter(
    'gwapi_kept_documents_total',
    'Requests of an endpoint that keeps whole documents (latest), by result: hit (answered with a kept one, no row read) or miss.',
    ['result'],
  );
  const connections = gauge(
    'gwapi_db_stream_connections',
    'Pooled database connections of series streams: held (a stream reads from it) or waiting (a stream waits for one).',
    ['state'],
  );
  const gate = gauge(
    'gwapi_db_connections',
    'Pooled database connections given to requests (held) and requests waiting for one (waiting), through the connection gate; at most DATABASE_POOL_MAX held.',
    ['state'],
  );
  const waits = new Histogram({
    name: 'gwapi_db_connection_wait_seconds',
    help: 'Time requests waited at the connection gate for a pooled database connection, however the wait ended, by kind of request: key, discovery, series, network, latest, sync.',
    labelNames: ['kind'] as const,
    buckets: WAIT_BUCKETS,
    registers,
  });
  const waitTimeouts = counter(
    'gwapi_db_wait_timeouts_total',
    'Requests answered 503 because no database connection came free within DATABASE_WAIT_SECONDS.',
  );
  gauge('gwapi_db_pool_max', 'Most database connections this process opens (DATABASE_POOL_MAX).').set(
    sources.poolMax,
  );
  new Gauge({
    name: 'gwapi_limits_state',
    help: 'Where client limits are kept (1 for the current state): in-process (no Redis), shared (Redis), fallback (Redis not answering).',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const current = sources.limits.state?.();
      for (const state of LIMITS_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  // Read replicas, as the monitor last saw them (none without DATABASE_READ_URL).
  let replicas: ReadSources['replicas'] = () => [];
  new Gauge({
    name: 'gwapi_read_replica_lag_seconds',
    help: 'Replay lag of each read replica of DATABASE_READ_URL behind the primary, as last measured (absent while it does not answer).',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const { name, status } of replicas()) {
        if (status.lagSeconds !== undefined) this.set({ replica: name }, status.lagSeconds);
      }
    },
  });
  new Gauge({
    name: 'gwapi_read_replica_state',
    help: 'State of each read replica (1 for the current one): usable, lagging (over READ_MAX_LAG_SECONDS), down (no answer), excluded (target_session_attrs).',
    labelNames: ['replica', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const { name, status } of replicas()) {
        for (const state of REPLICA_STATES)
          this.set({ replica: name, state }, state === status.state ? 1 : 0);
      }
    },
  });
  const reads = counter(
    'gwapi_reads_total',
    'Reads of wells, tubes and series by the source that served them: a replica (host:port) or primary.',
    ['source'],
  );
  const readsUnavailable = counter(
    'gwapi_reads_unavailable_total',
    'Reads answered 503 because no source could serve them: no-replica (none usable, READ_FALLBACK=unavailable) or replicas-behind (a sync token no replica had replayed yet).',
    ['reason'],
  );
  reads.inc({ source: 'primary' }, 0);
  for (const reason of ['no-replica', 'replicas-behind']) readsUnavailable.inc({ reason }, 0);
  // Both states are exported from the start, so a dashboard shows 0 rather than no data.
  connections.set({ state: 'held' }, 0);
  connections.set({ state: 'waiting' }, 0);
  gate.set({ state: 'held' }, 0);
  gate.set({ state: 'waiting' }, 0);
  for (const result of ['hit', 'miss']) keyCache.inc({ result }, 0);
  for (const kind of WAIT_KINDS) waits.zero({ kind });

  return {
    registry,

    responseDone: responses.add,

    /** A streamed response began; `ended` is to be called once when it is over. */
    streamStarted(): () => void {
      activeStreams.inc();
      let over = false;
      return () => {
        if (over) return;
        over = true;
        activeStreams.dec();
      };
    },

    measurementsStreamed(count: number): void {
      measurements.inc(count);
    },

    /** A document failed after its first byte: the client got an incomplete body. */
    documentCutOff(): void {
      cutOff.inc();
    },

    limited(reason: string): void {
      limited.inc({ reason });
    },

    keyLookup(hit: boolean): void {
      keyCache.inc({ result: hit ? 'hit' : 'miss' });
    },

    keptDocumentLookup(hit: boolean): void {
      keptDocuments.inc({ result: hit ? 'hit' : 'miss' });
    },

    /** The read replicas whose state and lag are exported on each scrape. */
    watchReplicas(sources: Pick<ReadSources, 'replicas'>): void {
      replicas = () => sources.replicas();
      for (const { name } of replicas()) reads.inc({ source: name }, 0);
    },

    /** A read was served by `source`. */
    readServed(source: ReadSource): void {
      reads.inc({ source: source.name });
    },

    /** A read no source could serve (503). */
    readsUnavailable(error: ReadsUnavailable): void {
      readsUnavailable.inc({ reason: error.reason });
    },

    /** The connection gate's counts changed. */
    connectionGate(counts: GateCounts): void {
      gate.set({ state: 'held' }, counts.held);
      gate.set({ state: 'waiting' }, counts.waiting);
    },

    /** A request of `kind` waited `waitedMs` for a database connection. */
    connectionWaited(kind: string, waitedMs: number): void {
      waits.observe({ kind }, waitedMs / 1000);
    },

    /** A request got no database connection in time (503). */
    connectionWaitTimedOut(): void {
      waitTimeouts.inc();
    },

    /** A series stream asks the pool for a connection (it waits until `held`). */
    streamConnection(): ConnectionUse {
      let state: 'waiting' | 'held' | 'released' = 'waiting';
      connections.inc({ state });
      return {
        held() {
          if (state !== 'waiting') return;
          connections.dec({ state });
          state = 'held';
          connections.inc({ state });
        },
        released() {
          if (state === 'released') return;
          connections.dec({ state });
          state = 'released';
        },
      };
    },
  };
}

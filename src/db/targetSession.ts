/**
 * libpq's `target_session_attrs` over several hosts, done here instead of in postgres.js. Its own
 * version (3.4) lets `read-write` connect to a hot standby (it reads only default_transaction_read_only,
 * which is off on a standby), and when no host qualifies it cycles through the hosts without pause and
 * without end: the query waits forever while every pool connection opens sessions on the standbys as
 * fast as they accept them.
 *
 * Instead, each new pool connection asks the locator for a socket (postgres.js's `socket` option). The
 * locator probes every host at once (a one-connection session: in recovery? read-only by default?),
 * picks the first that qualifies in the URL's order, as libpq does, and reuses that choice for
 * connections opened soon after. When none qualifies (a primary stopped, no standby promoted yet) the
 * socket fails at once with NoSuitableHost, so the query fails fast (503 + Retry-After upstream) and
 * the next connection, a moment later, probes again: at most one round of probes per
 * NEGATIVE_CACHE_MS whatever the load.
 */
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import postgres from 'postgres';
import { withTimeout } from '../timeLimit.js';
import type { HostPort, TargetSessionAttrs } from './postgresUrl.js';
import { acceptedHosts, probeRole, type Role, roleName } from './role.js';

export type LocatedHost = HostPort;

/** No host of the URL accepts the sessions `target_session_attrs` asks for (or none answered). */
export class NoSuitableHost extends Error {
  readonly code = 'NO_SUITABLE_HOST';
  constructor(
    readonly target: TargetSessionAttrs,
    /** Per host (host:port): its role, or why it did not answer. */
    readonly seen: Record<string, string>,
  ) {
    super(
      `no host is ${target}: ${Object.entries(seen)
        .map(([host, state]) => `${host} ${state}`)
        .join(', ')}`,
    );
    this.name = 'NoSuitableHost';
  }
}

/** How long a host found suitable is used for new connections without probing again. */
const CHOICE_REUSE_MS = 1000;
/** How long "no host qualifies" is answered without probing again. */
const NEGATIVE_CACHE_MS = 250;
/** A host that takes longer to answer a probe, or to accept a connection, counts as down. */
const PROBE_TIMEOUT_MS = 2000;

async function probe(url: string): Promise<Role> {
  const sql = postgres(url, {
    max: 1,
    connect_timeout: Math.ceil(PROBE_TIMEOUT_MS / 1000),
    idle_timeout: 1,
    onnotice: () => {},
    connection: { application_name: 'gwapi (host probe)' },
  });
  try {
    return await withTimeout(probeRole(sql), PROBE_TIMEOUT_MS);
  } finally {
    void sql.end({ timeout: 0 }).catch(() => {});
  }
}

export interface HostLocatorOptions {
  hosts: LocatedHost[];
  /** A single-host URL of host `index` with the same user, database and parameters, to probe it. */
  probeUrl: (index: number) => string;
  target: TargetSessionAttrs;
}

export interface HostLocator {
  /** The host new connections go to now: probed, or the recent choice. */
  locate(): Promise<LocatedHost>;
  /** For postgres.js's `socket` option: a TCP socket to the located host, or one failing with why not. */
  socket(): Promise<Socket | Duplex>;
}

/**
 * A socket that takes what postgres.js writes and then fails with `error`, which postgres.js gives the
 * waiting query. Not before its first write is flushed (a setImmediate of its own): a connection that
 * fails while that flush is pending keeps the flush marked as scheduled and never writes again.
 */
function failingSocket(error: Error): Duplex {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
  setImmediate(() => setImmediate(() => socket.destroy(error)));
  return socket;
}

/**
 * `socket` telling postgres.js of its end by 'close' alone. Told of a reset by 'error' first, postgres.js
 * fails the queries in flight then, but not those it is given before the 'close' that follows (a retry
 * of the failed one, say): those wait forever on that connection. Told by 'close' alone, it fails every
 * query in flight and only then takes new ones, on a new connection.
 */
function closingOnly(socket: Socket): Socket {
  const emit = socket.emit.bind(socket);
  socket.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event === 'error') return true;
    return event === 'close' ? emit('close', false) : emit(event, ...args);
  }) as Socket['emit'];
  return socket;
}

export function hostLocator(options: HostLocatorOptions): HostLocator {
  const { hosts, target } = options;
  let choice: { host: LocatedHost; at: number } | undefined;
  let failure: { error: NoSuitableHost; at: number } | undefined;
  let probing: Promise<LocatedHost> | undefined;

  async function probeAll(): Promise<LocatedHost> {
    const answers = await Promise.allSettled(hosts.map((_, index) => probe(options.probeUrl(index))));
    const roles = answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : undefined));
    // The first in the URL's order, as libpq.
    const index = acceptedHosts(target, roles).indexOf(true);
    if (index === -1) {
      const seen = Object.fromEntries(
        hosts.map(({ host, port }, i) => {
          const answer = answers[i]!;
          const state =
            answer.status === 'fulfilled'
              ? roleName(answer.value)
              : `not answering (${(answer.reason as Error).message})`;
          return [`${host}:${port}`, state];
        }),
      );
      throw new NoSuitableHost(target, seen);
    }
    return hosts[index]!;
  }

  async function locate(): Promise<LocatedHost> {
    const now = performance.now();
    if (choice && now - choice.at < CHOICE_REUSE_MS) return choice.host;
    if (failure && now - failure.at < NEGATIVE_CACHE_MS) throw failure.error;
    probing ??= probeAll()
      .then(
        (host) => {
          choice = { host, at: performance.now() };
          failure = undefined;
          return host;
        },
        (error: NoSuitableHost) => {
          choice = undefined;
          failure = { error, at: performance.now() };
          throw error;
        },
      )
      .finally(() => {
        probing = undefined;
      });
    return probing;
  }

  return {
    locate,
    async socket() {
      let host: LocatedHost;
      try {
        host = await locate();
      } catch (error) {
        return failingSocket(error as Error);
      }
      // An IPv6 address comes bracketed from the URL.
      const socket = connectTcp(host.port, host.host.replace(/^\[(.*)\]$/, '$1'));
      // Connected before postgres.js gets it: a socket that fails before postgres.js's first flush
      // would leave that pool connection silent for good (failingSocket).
      try {
        await once(socket, 'connect', { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      } catch (error) {
        socket.destroy();
        // The chosen host went away: the next connection probes again.
        if (choice?.host === host) choice = undefined;
        const timedOut = (error as Error).name === 'AbortError';
        return failingSocket(
          timedOut
            ? Object.assign(
                new Error(`no connection to ${host.host}:${host.port} within ${PROBE_TIMEOUT_MS} ms`),
                {
                  code: 'CONNECT_TIMEOUT',
                },
              )
            : (error as Error),
        );
      }
      // Read by postgres.js for TLS (servername) and its error messages.
      Object.assign(socket, { host: host.host, port: host.port });
      return closingOnly(socket);
    },
  };
}

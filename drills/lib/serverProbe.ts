/**
 * What a soak samples of a running `gwapi serve` process, each from the place that cannot lie about it:
 * resident memory and socket descriptors from /proc (the kernel's view, Linux), open API connections
 * from the kernel's TCP table, the database sessions from pg_stat_activity, live memory through the
 * process's inspector, and what only the process knows (streams, pooled connections held by streams)
 * from its own /metrics.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Sql } from '../../src/db/connect.js';
import { liveMemoryMb } from '../../testkit/inspector.js';
import { residentMb } from '../../testkit/processes.js';

export interface ServerSample {
  /** ms since the probe started. */
  at: number;
  rssMb: number;
  /** What a full garbage collection leaves: V8 heap and Buffers (testkit/inspector.ts). */
  liveMb: number;
  /** Established TCP connections to the API port (clients of the API). */
  apiConnections: number;
  /** Socket descriptors the process holds: API clients, database, Redis, listeners. */
  socketFds: number;
  /** Sessions of the server in pg_stat_activity. */
  databaseSessions: number;
  activeStreams: number;
  streamConnectionsHeld: number;
  streamConnectionsWaiting: number;
}

function socketFds(pid: number): number {
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
    } catch {
      // closed between the listing and the look
    }
  }
  return sockets;
}

/** ESTABLISHED (state 01) rows of /proc/net/tcp{,6} whose local port is `port`. */
function establishedTo(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let connections = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '01') connections++;
    }
  }
  return connections;
}

/** The value of one sample line of a Prometheus text exposition (labels as written, or none). */
export function metricValue(text: string, name: string, labels = ''): number {
  const line = `${name}${labels ? `{${labels}}` : ''} `;
  const at = text.indexOf(`\n${line}`);
  if (at < 0) return Number.NaN;
  return Number(text.slice(at + line.length + 1, text.indexOf('\n', at + 1)));
}

export function serverProbe(options: {
  pid: number;
  apiPort: number;
  /** The port of the process's inspector (started with `inspectFlag`). */
  inspectorPort: number;
  metricsUrl: string;
  /** A connection of the prober's own, to read pg_stat_activity. */
  sql: Sql;
  applicationName: string;
}) {
  const started = performance.now();
  return {
    async sample(): Promise<ServerSample> {
      const metrics = await (await fetch(options.metricsUrl)).text();
      const [{ sessions }] = (await options.sql`
        select count(*)::int as sessions from pg_stat_activity
        where application_name = ${options.applicationName}`) as [{ sessions: number }];
      return {
        at: performance.now() - started,
        rssMb: residentMb(options.pid),
        liveMb: await liveMemoryMb(options.inspectorPort),
        apiConnections: establishedTo(options.apiPort),
        socketFds: socketFds(options.pid),
        databaseSessions: sessions,
        activeStreams: metricValue(metrics, 'gwapi_active_streams'),
        streamConnectionsHeld: metricValue(metrics, 'gwapi_db_stream_connections', 'state="held"'),
        streamConnectionsWaiting: metricValue(metrics, 'gwapi_db_stream_connections', 'state="waiting"'),
      };
    },
  };
}

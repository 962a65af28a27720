/**
 * A failed connection to PostgreSQL or Redis told in the operator's terms: which setting points where
 * (never its credentials), what failed, and what to check; or that a connection in use was lost. An
 * error that is not about reaching, entering or keeping the server is left as it is.
 */
import { isWriteOnClosedConnection, meaningOf } from './db/errorCodes.js';
import { hostLabel, parsePostgresUrl } from './db/postgresUrl.js';
import { UserError } from './errors.js';

export interface ConnectionTarget {
  /** The setting that names the server (DATABASE_URL, REDIS_URL, REDIS_SENTINELS). */
  setting: string;
  service: 'PostgreSQL' | 'Redis';
  /** host:port (several, comma-separated, for sentinels). */
  address: string;
  host?: string;
  user?: string;
  /** PostgreSQL's database: the URL's path, or the user name as PostgreSQL defaults it. */
  database?: string;
}

const DEFAULT_PORTS = { PostgreSQL: '5432', Redis: '6379' } as const;

/** Where `url` points, without its user's password. */
export function connectionTarget(
  setting: string,
  service: ConnectionTarget['service'],
  url: string,
): ConnectionTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Several hosts (postgres://a,b/db) are no WHATWG URL: the first one's URL, with every host named.
    if (service === 'PostgreSQL') {
      try {
        const { hosts, first } = parsePostgresUrl(url);
        return { ...connectionTarget(setting, service, first.href), address: hosts.map(hostLabel).join(',') };
      } catch {}
    }
    return { setting, service, address: `the hosts in ${setting}` };
  }
  const user = decodeURIComponent(parsed.username) || undefined;
  const host = parsed.hostname || 'localhost';
  return {
    setting,
    service,
    address: `${host}:${parsed.port || DEFAULT_PORTS[service]}`,
    host,
    user,
    database: service === 'PostgreSQL' ? decodeURIComponent(parsed.pathname.slice(1)) || user : undefined,
  };
}

interface Failure {
  what: string;
  check: string;
}

/** Node's and OpenSSL's codes for a TLS handshake or certificate that failed. */
const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|EPROTO$|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_(GET|VERIFY)_)/;

function failureOf(error: unknown, target: ConnectionTarget): Failure | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const { service, setting, address } = target;
  const host = target.host ?? 'the host';
  const user = target.user ? `user "${target.user}"` : 'the user';
  const credentials = `Check the user and password in ${setting}`;
  switch (code) {
    case 'ECONNREFUSED':
      return { what: 'connection refused', check: `Is ${service} running and listening on ${address}?` };
    case 'ENOTFOUND':
      return { what: `host name "${host}" not found`, check: `Is the host name in ${setting} right?` };
    case 'EAI_AGAIN':
      return {
        what: `host name "${host}" could not be looked up (no answer from DNS)`,
        check: `Is the host name in ${setting} right, and DNS reachable from here?`,
      };
    case 'ETIMEDOUT':
    case 'CONNECT_TIMEOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return {
        what: code === 'EHOSTUNREACH' || code === 'ENETUNREACH' ? 'host unreachable' : 'no answer in time',
        check: `Is ${address} reachable from here (network, firewall), and the port right?`,
      };
    case '28P01':
      return { what: `password authentication failed for ${user}`, check: `${credentials}.` };
    case '28000':
      // The server's own words: an unknown role, or no pg_hba.conf entry (which says whether TLS was on).
      return { what: text, check: `${credentials}, and that the server admits ${user} from here.` };
    case 'NO_SUITABLE_HOST':
      // Which host answered what, in the driver's words (src/db/targetSession.ts).
      return {
        what: text,
        check: `Is PostgreSQL running on the hosts in ${setting}, and one of them the primary (is a standby being promoted)?`,
      };
    case '3D000':
      return {
        what: `database "${target.database}" does not exist`,
        check: `Create it (createdb ${target.database}) or correct ${setting}, then run \`gwapi migrate\`.`,
      };
  }
  if (/^(WRONGPASS|NOAUTH)\b/.test(text)) {
    return { what: 'authentication failed', check: `${credentials}.` };
  }
  if ((typeof code === 'string' && TLS_CODE.test(code)) || /\b(TLS|SSL)\b/.test(text)) {
    const choice = service === 'Redis' ? 'rediss:// or redis://' : 'sslmode';
    return {
      what: `TLS failed (${text})`,
      check: `Does ${address} speak TLS, with a certificate valid for "${host}"? Check ${choice} in ${setting}.`,
    };
  }
  return undefined;
}

/**
 * `cannot connect to …: what failed`, then what to check after `separator` (a second line for the
 * command line, a space for a log line); undefined when `error` is not a failure to connect.
 */
export function explainConnectionFailure(
  error: unknown,
  target: ConnectionTarget,
  separator = '\n  ',
): string | undefined {
  const failure = failureOf(error, target);
  if (!failure) return undefined;
  const database = target.database ? `, database "${target.database}"` : '';
  return (
    `cannot connect to ${target.service} at ${target.address} (${target.setting}${database}): ` +
    `${failure.what}.${separator}${failure.check}`
  );
}

/** What ended a connection that was open, in a few words. */
function howLost(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (isWriteOnClosedConnection(error) || code === 'CONNECTION_CLOSED') return 'the server closed it';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset by the server or the network';
  if (code === 'CONNECTION_ENDED' || code === 'CONNECTION_DESTROYED') return 'closed while a query waited';
  // The server's own words: terminating connection due to administrator command, …
  return typeof message === 'string' && message !== '' ? message : String(code);
}

/**
 * `connection to … lost: how`, in one line, when `error` says that a connection the command was using is
 * gone (errorCodes.ts: 'lost'): the server restarted, shut down or ended the session. undefined else.
 */
export function explainLostConnection(error: unknown, target: ConnectionTarget): string | undefined {
  if (meaningOf(error) !== 'lost') return undefined;
  const database = target.database ? `, database "${target.database}"` : '';
  return (
    `connection to ${target.service} at ${target.address} (${target.setting}${database}) lost: ` +
    `${howLost(error)}. What the command had not committed is rolled back; run it again once ` +
    `${target.service} answers.`
  );
}

/**
 * `error` as a UserError in the operator's terms when it is a failure to connect or a connection lost
 * in the middle of a command; else as it is.
 */
export function explainedError(error: unknown, target: ConnectionTarget): unknown {
  if (error instanceof UserError) return error;
  const explained = explainConnectionFailure(error, target) ?? explainLostConnection(error, target);
  return explained ? new UserError(explained, { cause: error }) : error;
}

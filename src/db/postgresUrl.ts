/**
 * PostgreSQL URLs in libpq's form, several hosts included: `postgres://user@h1:5432,h2:5433/db?…`.
 * No WHATWG URL parses a host list, so it is split off first and the rest is an ordinary URL.
 *
 * Two libpq parameters say how to use the list: `target_session_attrs` (which kind of server a
 * connection must reach) and `load_balance_hosts` (whether to try the hosts in order or at random).
 * We honour both ourselves (src/db/targetSession.ts, src/db/readReplicas/) and give postgres.js one
 * host without them: it would send `load_balance_hosts` to the server as a setting, which the server
 * refuses, and its own `target_session_attrs` takes a hot standby for read-write.
 */

export interface HostPort {
  host: string;
  port: number;
}

export const TARGET_SESSION_ATTRS = [
  'any',
  'read-write',
  'read-only',
  'primary',
  'standby',
  'prefer-standby',
] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

export const LOAD_BALANCE_HOSTS = ['disable', 'random'] as const;
export type LoadBalanceHosts = (typeof LOAD_BALANCE_HOSTS)[number];

export interface PostgresUrl {
  hosts: HostPort[];
  /** The URL with the first host only: user, password, database and parameters as given. */
  first: URL;
  targetSessionAttrs: TargetSessionAttrs | undefined;
  loadBalanceHosts: LoadBalanceHosts | undefined;
}

const DEFAULT_PORT = 5432;
const PROTOCOLS = ['postgres:', 'postgresql:'];

/** Why `text` is no PostgreSQL URL, in the words of a setting's error; undefined when it is one. */
export function postgresUrlProblem(text: string): string | undefined {
  try {
    parsePostgresUrl(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export function parsePostgresUrl(text: string): PostgresUrl {
  const scheme = /^([a-z]+:)\/\//i.exec(text);
  if (!scheme || !PROTOCOLS.includes(scheme[1]!.toLowerCase())) {
    throw new TypeError('expected a URL starting with postgres:// or postgresql://');
  }
  const afterScheme = text.slice(scheme[0].length);
  const authorityEnd = afterScheme.search(/[/?#]/);
  const authority = authorityEnd === -1 ? afterScheme : afterScheme.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  const hostList = authority.slice(at + 1);
  const hosts = hostList.split(',').map(hostPort);
  const first = new URL(
    `${scheme[0]}${authority.slice(0, at + 1)}${hostList.split(',')[0]}${authorityEnd === -1 ? '' : afterScheme.slice(authorityEnd)}`,
  );
  return {
    hosts,
    first,
    targetSessionAttrs: oneOf(first, 'target_session_attrs', TARGET_SESSION_ATTRS),
    loadBalanceHosts: oneOf(first, 'load_balance_hosts', LOAD_BALANCE_HOSTS),
  };
}

function hostPort(text: string): HostPort {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]*)(?::(\d{1,5}))?$/.exec(text);
  if (!match) throw new TypeError('expected host:port pairs separated by commas');
  const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2]);
  if (port < 1 || port > 65535) throw new TypeError('expected ports from 1 to 65535');
  return { host: match[1] || 'localhost', port };
}

function oneOf<T extends string>(url: URL, name: string, values: readonly T[]): T | undefined {
  const value = url.searchParams.get(name);
  if (value === null) return undefined;
  if (!values.includes(value as T)) throw new TypeError(`expected ${name} to be one of ${values.join(', ')}`);
  return value as T;
}

/** The URL naming host `index` of `text` alone, without the parameters that choose among hosts. */
export function hostUrl(text: string, index: number): string {
  const { hosts, first } = parsePostgresUrl(text);
  const target = hosts[index];
  if (!target) throw new RangeError(`no host ${index} in the URL`);
  const url = new URL(first);
  url.hostname = target.host;
  url.port = String(target.port);
  url.searchParams.delete('target_session_attrs');
  url.searchParams.delete('load_balance_hosts');
  return url.toString();
}

/** `text` without libpq's parameters that choose among hosts, the rest as written. */
export function withoutHostChoice(text: string): string {
  const query = text.indexOf('?');
  if (query === -1) return text;
  const params = new URLSearchParams(text.slice(query + 1));
  if (!params.has('load_balance_hosts') && !params.has('target_session_attrs')) return text;
  params.delete('load_balance_hosts');
  params.delete('target_session_attrs');
  const rest = params.toString();
  return rest ? `${text.slice(0, query)}?${rest}` : text.slice(0, query);
}

/** `host:port` of each host, for logs, metrics and readiness (never the user or password). */
export const hostLabel = ({ host, port }: HostPort) => `${host}:${port}`;

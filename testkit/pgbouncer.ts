/**
 * A throwaway PgBouncer (Debian's `pgbouncer` package) on a free loopback port, in front of the suite's
 * PostgreSQL: transaction pooling, a small server pool, SCRAM for clients and for the server with the
 * user and password of the upstream URL. Its files live in a temporary folder removed on stop.
 */
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from '../src/db/embedded.js';
import { stopProcess, untilReady } from './processes.js';

export interface PgBouncer {
  /** `postgres://user:password@127.0.0.1:PORT/` + `database`: the upstream database through PgBouncer. */
  url(database: string): string;
  /** A connection to the admin console (database `pgbouncer`) for SHOW commands; ended on stop. */
  admin: postgres.Sql;
  version: string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per database and user (`default_pool_size`). */
  poolSize: number;
}

/** Debian installs it in /usr/sbin, which is not on every user's PATH. */
export function findPgBouncer(): string | undefined {
  const folders = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin', '/usr/local/sbin'];
  for (const folder of folders) {
    try {
      accessSync(join(folder, 'pgbouncer'), constants.X_OK);
      return join(folder, 'pgbouncer');
    } catch {}
  }
  return undefined;
}

/** PgBouncer refuses to run as root; as root it runs as the `postgres` user, which must read its files. */
function runAs(): { user: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { user: 'postgres', uid: id('-u'), gid: id('-g') };
}

const quoted = (value: string) => `"${value.replaceAll('"', '""')}"`;

export async function startPgBouncer(upstreamUrl: string, options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = findPgBouncer();
  if (!binary) throw new Error('pgbouncer is not installed (apt-get install pgbouncer)');
  const upstream = new URL(upstreamUrl);
  const user = decodeURIComponent(upstream.username);
  const password = decodeURIComponent(upstream.password);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'gwapi-pgbouncer-'));
  const userlist = join(dir, 'userlist.txt');
  const config = join(dir, 'pgbouncer.ini');
  await writeFile(userlist, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
  await writeFile(
    config,
    [
      '[databases]',
      // Any database name goes to the database of that name upstream.
      `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${userlist}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 500',
      // The admin console asks nothing of the server; the log goes to standard error for the test.
      'logfile =',
      'pidfile =',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const owner = runAs();
  if (owner) for (const path of [dir, userlist, config]) await chown(path, owner.uid, owner.gid);
  await chmod(dir, 0o700);

  const child = spawn(binary, [...(owner ? ['-u', owner.user] : []), config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let version = '';
  await untilReady(
    child,
    (line) => {
      version ||= /PgBouncer (\d+\.\d+\.\d+)/.exec(line)?.[1] ?? '';
      return line.includes(`listening on 127.0.0.1:${port}`) ? true : undefined;
    },
    { what: 'pgbouncer', timeoutMs: 10_000, streams: ['stdout', 'stderr'] },
  );
  const admin = postgres(`postgres://${upstream.username}:${upstream.password}@127.0.0.1:${port}/pgbouncer`, {
    max: 1,
    // The admin console speaks the simple protocol only: no type query at connect, no prepared statements.
    fetch_types: false,
    prepare: false,
    onnotice: () => {},
  });
  return {
    url: (database) => {
      const url = new URL(upstreamUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      url.pathname = `/${database}`;
      return url.toString();
    },
    admin,
    version,
    stop: async () => {
      await admin.end({ timeout: 1 });
      // SIGTERM: immediate shutdown (SIGINT would wait for clients to leave).
      await stopProcess(child, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

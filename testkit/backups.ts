/**
 * A pgBackRest repository for a PostgreSQL 15 server of testkit/replication.ts, set up from the files
 * of deploy/pgbackrest/ with only the paths changed (a throwaway folder instead of /var/lib/pgbackrest,
 * the server's data directory, port and socket), so that the drill backs up and restores with what an
 * operator installs. Every pgbackrest command runs as `postgres` when we are root, as the server's
 * archive_command does.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Node,
  newNode,
  type PgNode,
  runAsServerUser,
  serverFolder,
  writeServerFile,
} from './replication.js';

const DEPLOYED = fileURLToPath(new URL('../deploy/pgbackrest/', import.meta.url));
export const STANZA = 'gwapi';

export interface BackupRepository {
  folder: string;
  /** The configuration file every command (and the server's archive_command) reads. */
  config: string;
  /** deploy/pgbackrest/postgresql.conf, its pgbackrest commands pointed at `config`. */
  serverSettings: Record<string, string>;
  /** Writes `config` for `server` (its data directory, port and socket): before the first command. */
  attach(server: PgNode): Promise<void>;
  /**
   * Writes `config` with the stanza's server settings left as deployed, for servers that name their own
   * (a Patroni node's `PGBACKREST_PG1_PATH` and `PGBACKREST_PG1_PORT` in its environment).
   */
  attachMany(): Promise<void>;
  /** `pgbackrest --stanza=gwapi ARGS`; resolves with its standard output. */
  pgbackrest(args: string[]): Promise<string>;
  /**
   * `pgbackrest restore ARGS` into `folder`/`name`, a data directory made for it, on a free port: the
   * server is not started.
   */
  restore(name: string, args: string[]): Promise<Node>;
  /** Removes the folder (the servers restored into it must be stopped first). */
  remove(): Promise<void>;
}

/** deploy/pgbackrest/pgbackrest.conf with the values of `overrides` (by section) replacing its own. */
function configWith(text: string, overrides: Record<string, Record<string, string>>): string {
  const out: string[] = [];
  let section = '';
  for (const line of text.split('\n')) {
    const header = /^\[(.+)\]$/.exec(line.trim());
    if (header) {
      section = header[1]!;
      out.push(line, ...Object.entries(overrides[section] ?? {}).map(([name, value]) => `${name}=${value}`));
      continue;
    }
    const name = /^([\w-]+)=/.exec(line)?.[1];
    if (!(name && overrides[section]?.[name] !== undefined)) out.push(line);
  }
  return out.join('\n');
}

/** The `name = value` lines of deploy/pgbackrest/postgresql.conf. */
function serverSettingsOf(text: string, config: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^(\w+)\s*=\s*(.+)$/.exec(line.trim());
    if (match) settings[match[1]!] = match[2]!.replaceAll('pgbackrest ', `pgbackrest --config=${config} `);
  }
  return settings;
}

export async function backupRepository(): Promise<BackupRepository> {
  const folder = await serverFolder('gwapi-backups-');
  const config = join(folder, 'pgbackrest.conf');
  const deployedConfig = await readFile(join(DEPLOYED, 'pgbackrest.conf'), 'utf8');
  const serverSettings = serverSettingsOf(await readFile(join(DEPLOYED, 'postgresql.conf'), 'utf8'), config);
  const writeConfig = (stanza: Record<string, string>) =>
    writeServerFile(
      config,
      configWith(deployedConfig, {
        global: {
          'repo1-path': join(folder, 'repository'),
          'log-path': folder,
          'lock-path': folder,
          'log-level-file': 'off',
        },
        [STANZA]: stanza,
      }),
    );
  const pgbackrest = (args: string[]) =>
    runAsServerUser('pgbackrest', [`--config=${config}`, `--stanza=${STANZA}`, ...args]);
  return {
    folder,
    config,
    serverSettings,
    attach: (server) =>
      writeConfig({
        'pg1-path': server.dir,
        'pg1-port': String(server.port),
        'pg1-socket-path': dirname(server.dir),
      }),
    attachMany: () => writeConfig({}),
    pgbackrest,
    async restore(name, args) {
      const node = await newNode(name, folder);
      await runAsServerUser('mkdir', ['-m', '700', node.dir]);
      await pgbackrest([`--pg1-path=${node.dir}`, ...args, 'restore']);
      return node;
    },
    remove: () => rm(folder, { recursive: true, force: true }),
  };
}

/**
 * Backups beside Patroni (docs/operations/backups.md, "Set up: Patroni"): two nodes run
 * deploy/patroni/patroni.yml unchanged, each with a pgBackRest configuration from deploy/pgbackrest/ that
 * names its own data directory and port in its environment, as a node's configuration manager would.
 * The leader's archive_command reaches the repository (`pgbackrest check`), a full backup is taken on it,
 * and a replica re-cloned through Patroni is made from that backup (create_replica_methods), where the
 * first one, made before any backup existed, fell back to a base backup.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { backupRepository, STANZA } from '../../testkit/backups.js';
import { startPatroniCluster } from '../../testkit/patroni.js';
import { etcd, patroni, pgbackrest, postgres15 } from '../../testkit/prerequisites.js';
import { unlessInstalled } from '../helpers/installed.js';

const skip =
  unlessInstalled(patroni) ||
  unlessInstalled(etcd) ||
  unlessInstalled(postgres15) ||
  unlessInstalled(pgbackrest);
/** Debian's PostgreSQL puts its sockets there; patroni.yml does not move them. */
const SOCKETS = '/var/run/postgresql';

t.test(
  'Patroni archives to pgBackRest and makes replicas from its backup',
  { skip, timeout: 240_000 },
  async (t) => {
    const repository = await backupRepository();
    await repository.attachMany();
    const nodes = new Map<string, { port: number; dataDir: string }>();
    const cluster = await startPatroniCluster({
      nodes: 2,
      env: (node) => {
        nodes.set(node.name, node);
        return {
          PGBACKREST_CONFIG: repository.config,
          PGBACKREST_PG1_PATH: node.dataDir,
          PGBACKREST_PG1_PORT: String(node.port),
          PGBACKREST_PG1_SOCKET_PATH: SOCKETS,
          // The restore's log shows which way a replica was made.
          PGBACKREST_LOG_LEVEL_FILE: 'info',
        };
      },
    });
    t.teardown(async () => {
      await cluster.stop();
      await repository.remove();
    });
    const members = await cluster.healthy();
    const leader = members.find((member) => member.role === 'leader')!;
    const replica = members.find((member) => member.role !== 'leader')!;
    const on = nodes.get(leader.name)!;
    const leaderArgs = [`--pg1-path=${on.dataDir}`, `--pg1-port=${on.port}`, `--pg1-socket-path=${SOCKETS}`];

    await repository.pgbackrest([...leaderArgs, 'stanza-create']);
    // check switches the leader to a new WAL segment and waits until archive_command has put it in the repository.
    await repository.pgbackrest([...leaderArgs, 'check']);
    await repository.pgbackrest([...leaderArgs, '--type=full', 'backup']);
    const info = JSON.parse(await repository.pgbackrest(['--output=json', 'info'])) as {
      backup: { type: string }[];
    }[];
    t.same(
      info[0]!.backup.map((backup) => backup.type),
      ['full'],
      'one full backup of the leader',
    );

    const restoreLog = join(repository.folder, `${STANZA}-restore.log`);
    const restoresDone = async () =>
      (await readFile(restoreLog, 'utf8').catch(() => '')).split(
        'restore command end: completed successfully',
      ).length - 1;
    t.equal(await restoresDone(), 0, 'the first replica was cloned: there was no backup to restore yet');

    const { api_url: api } = replica as typeof replica & { api_url: string };
    const reinitialized = await fetch(api.replace(/\/patroni$/, '/reinitialize'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ force: true }),
    });
    t.ok(reinitialized.ok, `Patroni re-clones ${replica.name}: ${reinitialized.status}`);
    await cluster.healthy(120_000);
    t.equal(await restoresDone(), 1, 're-cloned from the repository: pgbackrest restore --type=standby');
  },
);

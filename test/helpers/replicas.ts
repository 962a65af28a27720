/** A primary and two streaming standbys (testkit/replication.ts) holding the registry and a reader's key. */
import type { Test } from 'tap';
import { connect } from '../../src/db/connect.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { createKey } from '../../src/keys/store.js';
import { rememberKey } from '../../testkit/outputCapture.js';
import { type PgNode, type ReplicationCluster, startReplicationCluster } from '../../testkit/replication.js';
import { rowImporter, TWO_TUBES } from './importFixtures.js';

export interface ReplicatedData {
  cluster: ReplicationCluster;
  standbys: [PgNode, PgNode];
  /** A key that reads every tube, and its id. */
  key: string;
  keyId: string;
  /** Imports on the primary, by the real importer (which logs the changes sync tokens read). */
  importRows: ReturnType<typeof rowImporter>;
}

/** The cluster of `t`, TWO_TUBES registered and `first` imported, replayed by both standbys. */
export async function replicatedData(
  t: Test,
  first: Parameters<ReturnType<typeof rowImporter>>[0],
): Promise<ReplicatedData> {
  const cluster = await startReplicationCluster({ standbys: 2, owner: t });
  const sql = connect(cluster.primary.url, { max: 2 });
  t.teardown(() => sql.end({ timeout: 1 }));
  await upsertRegistry(sql, TWO_TUBES);
  const { key, keyId } = await createKey(sql, { name: 'reader', tubeIdentifiers: [], allTubes: true });
  rememberKey(key);
  const importRows = rowImporter(sql);
  await importRows(first);
  await cluster.caughtUp();
  return { cluster, standbys: cluster.standbys as [PgNode, PgNode], key, keyId, importRows };
}

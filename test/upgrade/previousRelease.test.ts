/**
 * Expand, then contract: the previous release (testkit/previousRelease.ts), run from a git worktree of
 * its commit, serves against this release's schema (every migration of sql/ applied to a filled
 * database, not yet finished by `gwapi migrate --finish`) while this release imports: it is ready, and discovery, a series, its 304 and a sync delta of what this
 * release imported are right. The migration drill (testkit/drills/migrationDrill.ts) runs it under load.
 */
import t from 'tap';
import { readMigrations } from '../../src/db/migrate.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { createKey } from '../../src/keys/store.js';
import { type Replica, spawnReplica } from '../../testkit/gwapi.js';
import { captureProcess, rememberKey } from '../../testkit/outputCapture.js';
import { checkoutRelease, PREVIOUS_RELEASE } from '../../testkit/previousRelease.js';
import { januaryRows, seriesPath, WELLS } from '../helpers/conditional.js';
import { upgradedDatabase } from '../helpers/database.js';
import { get } from '../helpers/http.js';
import { OTHER, rowImporter, TUBE, TWO_TUBES } from '../helpers/importFixtures.js';
import { networkPath } from '../helpers/network.js';

const JANUARY = { from: '2024-01-01T00:00:00Z', to: '2024-02-01T00:00:00Z' };

t.test(`${PREVIOUS_RELEASE.version} serves against this release's schema`, async (t) => {
  // As an upgrade leaves a database until `gwapi migrate --finish`, the only time the release before
  // serves it: filled before this release's migrations, every level still a double.
  const db = await upgradedDatabase(t, async (sql) => {
    await upsertRegistry(sql, TWO_TUBES);
    await rowImporter(sql)([[OTHER, '1990-01-01T00:00:00Z', '1']]);
  });
  const migrations = await readMigrations();
  t.same(
    (await db.sql`select max(version)::int as version from schema_migrations`)[0]!.version,
    migrations.at(-1)!.version,
    'every migration of this release is applied',
  );
  const importRows = rowImporter(db.sql);
  await importRows([...januaryRows(TUBE), ...januaryRows(OTHER)]);
  const { key } = await createKey(db.sql, { name: 'reader', tubeIdentifiers: [], allTubes: true });
  rememberKey(key);
  const headers = { 'x-api-key': key };

  const release = await checkoutRelease();
  t.teardown(() => release.remove());
  const replica: Replica = await spawnReplica(
    { DATABASE_URL: db.url },
    { root: release.root, owner: t, watch: captureProcess },
  );

  const ready = await get(replica.base, '/health/ready');
  t.equal(ready.status, 200, `ready: ${ready.body}`);
  t.ok(replica.child.spawnargs.includes(`${release.root}/src/cli.ts`), `it runs ${release.root}`);
  t.ok(
    !(await readMigrations(`${release.root}/sql`)).some((m) => m.version === migrations.at(-1)!.version),
    'which lacks the last migration',
  );

  const wells = await get(replica.base, WELLS, headers);
  t.equal(wells.status, 200);
  t.match(JSON.parse(wells.body), [{ name: 'W1', tubes: [{ identifier: TUBE }, { identifier: OTHER }] }]);

  const series = await get(replica.base, seriesPath(TUBE), headers);
  t.equal(series.status, 200);
  t.equal((JSON.parse(series.body) as { measurements: unknown[] }).measurements.length, 24);
  const again = await get(replica.base, seriesPath(TUBE), {
    ...headers,
    'if-none-match': String(series.headers.etag),
  });
  t.equal(again.status, 304, 'a 304 for the same series');

  const first = await get(replica.base, networkPath(JANUARY), headers);
  t.equal(first.status, 200);
  const token = String(first.headers['sync-token']);
  // This release imports; the previous one answers the delta from the change log both write.
  await importRows([[TUBE, '2024-01-02T05:00:00Z', '9.5']]);
  const delta = await get(replica.base, networkPath(JANUARY, `&changedSince=${token}`), headers);
  t.equal(delta.status, 200);
  t.match(JSON.parse(delta.body), {
    series: [{ tubeIdentifier: TUBE, measurements: [{ observedAt: '2024-01-02T05:00:00Z', value: 9.5 }] }],
  });
  t.equal((JSON.parse(delta.body) as { series: unknown[] }).series.length, 1, 'only the changed tube');
  const changed = await get(replica.base, seriesPath(TUBE), {
    ...headers,
    'if-none-match': String(series.headers.etag),
  });
  t.equal(changed.status, 200, 'and no 304 once it changed');
});

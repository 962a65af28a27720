/**
 * The restore drill (testkit/drills/restoreDrill.ts), shortened: a PostgreSQL 15 primary archiving to a
 * pgBackRest repository set up from deploy/pgbackrest/, a full backup, imports and the drills' load on a
 * real `gwapi serve`, a restore target in the middle of the imports and a key revoked after it, then a
 * point-in-time restore into a fresh data directory and a new `gwapi serve` against it. Each part of
 * the verdict is asserted on its own, so a failure names what broke. `npm run restore-drill` is the
 * long run.
 */
import t from 'tap';
import { backupRepository } from '../../testkit/backups.js';
import { addDrillFixture } from '../../testkit/drills/drillFixture.js';
import { addRestoreFixture, runRestoreDrill } from '../../testkit/drills/restoreDrill.js';
import { captureProcess } from '../../testkit/outputCapture.js';
import { pgbackrest, postgres15 } from '../../testkit/prerequisites.js';
import { startReplicationCluster } from '../../testkit/replication.js';
import { unlessInstalled } from '../helpers/installed.js';

const SETTLE_MS = 4000;
const PROBES = 21;

t.test(
  'a point-in-time restore under load',
  { skip: unlessInstalled(postgres15) || unlessInstalled(pgbackrest) },
  async (t) => {
    const repository = await backupRepository();
    t.teardown(() => repository.remove());
    const cluster = await startReplicationCluster({
      standbys: 0,
      owner: t,
      settings: repository.serverSettings,
    });
    await repository.attach(cluster.primary);
    await repository.pgbackrest(['stanza-create']);
    await repository.pgbackrest(['check']);
    const fixture = await cluster.primary.query(async (sql) => ({
      ...(await addDrillFixture(sql, { keys: 8, holders: 0 })),
      ...(await addRestoreFixture(sql, PROBES)),
    }));
    await repository.pgbackrest(['--type=full', 'backup']);
    const report = await runRestoreDrill({
      cluster,
      repository,
      fixture,
      folder: repository.folder,
      settleMs: SETTLE_MS,
      periodMs: 500,
      owner: t,
      watch: captureProcess,
    });
    const { imports, tokens, validators, keys } = report;

    t.ok(report.timeline >= 2, `the restore started timeline ${report.timeline}`);
    t.ok(imports.ackedBefore > 0 && imports.begunAfter > 0, 'imports on both sides of the target');
    t.equal(
      imports.keptOfAckedBefore,
      imports.ackedBefore,
      'every import acknowledged before the target is restored',
    );
    t.equal(imports.keptOfBegunAfter, 0, 'no import begun after the target is restored');
    t.equal(imports.partial, 0, 'no import is restored in part');
    t.ok(report.timings.ready > 0, `ready ${Math.round(report.timings.ready)} ms after the restore command`);
    t.ok(
      report.xidsPassed.restored > report.xidsPassed.token,
      'the restored database reused the lost transaction ids',
    );

    const before = tokens.filter((p) => p.side === 'before');
    const after = tokens.filter((p) => p.side === 'after');
    t.ok(before.length > 0 && after.length > 0, 'tokens from both sides of the target');
    t.same(
      before.filter((p) => !(p.status === 200 && p.wrongRows === 0)),
      [],
      'a token from before the target gives an exact delta',
    );
    t.same(
      after.filter((p) => !(p.status === 410 || (p.status === 200 && p.wrongRows === 0))),
      [],
      'a token from after the target gives 410, never a 200 that is wrong',
    );
    t.ok(
      after.some((p) => p.status === 410),
      'tokens from after the target get 410 (an exact 200 is only for one whose snapshot the restore kept whole)',
    );
    for (const header of ['If-None-Match', 'If-Modified-Since'] as const) {
      const probed = validators.filter((p) => p.header === header);
      t.ok(probed.length >= PROBES * 2, `${probed.length} ${header} probes`);
      t.same(
        probed.filter((p) => p.wrong),
        [],
        `no ${header} from before the restore gets a 304 for another body`,
      );
    }

    t.same(
      keys.afterRestore,
      { revoked: 200, created: 401, granted: 403 },
      'after the restore the keys are as at the target: revoked one served, created one unknown, grant missing',
    );
    t.same(
      keys.changed.filter((change) => !change.endsWith(': created')).sort(),
      [`${fixture.grantedKeyId}: granted`, `${fixture.revokedKeyId}: revoked`].sort(),
      'the old timeline shows the revocation and the grant',
    );
    t.equal(keys.changed.filter((change) => change.endsWith(': created')).length, 1, 'and the key created');
    t.same(
      keys.afterGuide,
      { revoked: 401, created: 200, granted: 200 },
      "after the guide's steps: the revoked key refused, the created key and the grant served",
    );
    t.equal(keys.leftAfterGuide, 0, "no key differs from the old timeline's after the guide's steps");
    t.same(report.problems, [], 'the drill passes');
  },
);

/**
 * The primary switch-over drill (testkit/drills/switchoverDrill.ts), shortened: a PostgreSQL 15 primary
 * and two streaming standbys, two real `gwapi serve` replicas behind Debian's HAProxy, a Redis of its
 * own, the rolling drill's load, and beside it a never-used key, an import and a revoked key every
 * moment. The primary is stopped, a standby promoted, the other made to follow it. Series and discovery
 * never fail; what needs the primary fails only inside the window and only as "unavailable"; nothing
 * acknowledged is lost; the revoked key stays refused; the service is whole within the 5 s of
 * the promotion; every sync token the primary issued before the stop gives its exact delta afterwards.
 * `npm run switchover` is the long run.
 */
import t from 'tap';
import { addDrillFixture } from '../../testkit/drills/drillFixture.js';
import { addProbeFixture, freshKeysFor } from '../../testkit/drills/primaryProbes.js';
import { runSwitchoverDrill, WHOLE_WITHIN_MS } from '../../testkit/drills/switchoverDrill.js';
import { captureProcess } from '../../testkit/outputCapture.js';
import { haproxy, postgres15 } from '../../testkit/prerequisites.js';
import { startRedis } from '../../testkit/redis.js';
import { startReplicationCluster } from '../../testkit/replication.js';
import { unlessInstalled } from '../helpers/installed.js';
import { assertLoadServed } from '../helpers/probedLoad.js';

const SETTLE_MS = 3000;

t.test(
  'primary switch-over under load',
  {
    skip: unlessInstalled(haproxy) || unlessInstalled(postgres15),
  },
  async (t) => {
    const cluster = await startReplicationCluster({ standbys: 2, owner: t });
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const fixture = await cluster.primary.query(async (sql) => {
      const drill = await addDrillFixture(sql, { keys: 16, holders: 0 });
      return { ...drill, ...(await addProbeFixture(sql, drill, freshKeysFor(SETTLE_MS))) };
    });
    await cluster.caughtUp();
    const report = await runSwitchoverDrill({
      cluster,
      redisUrl: redis.url,
      fixture,
      replicas: 2,
      folder: t.testdir(),
      settleMs: SETTLE_MS,
      periodMs: 500,
      owner: t,
      watch: captureProcess,
    });
    t.same(report.problems, [], 'nothing that must hold was broken');

    assertLoadServed(t, report.phases);
    const probes = report.phases.flatMap((phase) => phase.probes);
    for (const kind of ['fresh key', 'import', 'revoked key'] as const) {
      const ofKind = probes.filter((p) => p.kind === kind);
      t.ok(ofKind.length > 0, `${ofKind.length} ${kind} requests`);
      t.same(
        ofKind.filter(
          (p) =>
            p.outcome === 'failed' &&
            (!p.expected || p.endedAt < report.stopAt || p.startedAt > report.wholeAt),
        ),
        [],
        `${kind}: failures only inside the window, and only as "unavailable"`,
      );
    }
    t.same(
      probes.filter((p) => p.kind === 'revoked key' && p.outcome !== 'ok'),
      [],
      'the revoked key: 401 every time',
    );
    t.ok(report.promotedAt > report.stopAt, 'promoted after the stop');
    t.ok(
      report.wholeAt - report.promotedAt <= WHOLE_WITHIN_MS,
      `whole again ${Math.round(report.wholeAt - report.promotedAt)} ms after the promotion`,
    );
    t.ok(report.importsAcknowledged > 0, `${report.importsAcknowledged} imports acknowledged`);
    t.equal(report.importsKept, report.importsAcknowledged, 'each of them on the new primary');
    t.ok(report.followerStreams, 'the other standby replays the new primary');
    t.ok(
      report.tokens.length > 0,
      `${report.tokens.length} sync tokens taken from the primary before the stop`,
    );
    t.same(
      report.tokens.filter((check) => check.verdict !== 'exact delta'),
      [],
      'every token from before the switch-over gives its exact delta on the new primary',
    );
  },
);

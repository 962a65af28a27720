/**
 * The crash drill (testkit/drills/crashDrill.ts), shortened: a Patroni cluster (etcd and three
 * PostgreSQL 15 nodes with deploy/patroni/patroni.yml) with a short ttl and loop_wait and
 * synchronous_mode on, two real `gwapi serve` replicas behind Debian's HAProxy, a Redis of its own, the
 * switch-over drill's load. The leader's Patroni and PostgreSQL get SIGKILL together. Reads never fail;
 * imports fail only inside the window and only as "unavailable"; the window stays within ttl +
 * loop_wait; no acknowledged import is lost; the old primary's sync tokens give exact deltas, or 410
 * for rows the new leader lacks. `npm run crash` is the long run, with synchronous_mode off as well.
 */
import t from 'tap';
import {
  type CrashSettings,
  configureCluster,
  runCrashDrill,
  startCrashCluster,
  windowBoundMs,
} from '../../testkit/drills/crashDrill.js';
import { captureProcess } from '../../testkit/outputCapture.js';
import { bootstrapSettings } from '../../testkit/patroni.js';
import { etcd, haproxy, patroni, postgres15 } from '../../testkit/prerequisites.js';
import { startRedis } from '../../testkit/redis.js';
import { unlessInstalled } from '../helpers/installed.js';
import { assertLoadServed } from '../helpers/probedLoad.js';

const SETTLE_MS = 3000;
const SETTINGS: CrashSettings = { synchronousMode: true, ttl: 10, loopWait: 2, retryTimeout: 4 };
/**
 * Streaming to the end: standbys that lacked the primary's last writes would be judged ever further
 * behind once it is gone, and refused reads after READ_MAX_LAG_SECONDS (`npm run crash` shows it).
 */
const LAG_MS = 0;

t.test(
  'a crash of the Patroni leader under load, synchronous_mode on',
  {
    skip:
      unlessInstalled(haproxy) ||
      unlessInstalled(postgres15) ||
      unlessInstalled(patroni) ||
      unlessInstalled(etcd),
    timeout: 300_000,
  },
  async (t) => {
    const { cluster, fixture } = await startCrashCluster({
      keys: 16,
      settleMs: SETTLE_MS,
      settings: SETTINGS,
      owner: t,
    });
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    await configureCluster(cluster, SETTINGS, bootstrapSettings().loopWait);
    const report = await runCrashDrill({
      cluster,
      redisUrl: redis.url,
      fixture,
      replicas: 2,
      folder: t.testdir(),
      settleMs: SETTLE_MS,
      periodMs: 500,
      settings: SETTINGS,
      lagMs: LAG_MS,
      owner: t,
      watch: captureProcess,
    });
    t.same(report.problems, [], 'nothing that must hold was broken');

    assertLoadServed(t, report.phases);
    const probes = report.phases.flatMap((phase) => phase.probes);
    const fresh = probes.filter((p) => p.kind === 'fresh key');
    t.ok(fresh.length > 0, `${fresh.length} never-used keys`);
    t.same(
      fresh.filter((p) => p.outcome !== 'ok'),
      [],
      'never-used keys: every one looked up and served, in the window too',
    );
    t.same(
      probes.filter((p) => p.kind === 'revoked key' && p.outcome !== 'ok'),
      [],
      'the revoked key: 401 every time',
    );
    const imports = probes.filter((p) => p.kind === 'import');
    t.same(
      imports.filter(
        (p) =>
          p.outcome === 'failed' &&
          (!p.expected || p.endedAt < report.killAt || p.startedAt > report.firstImportAt),
      ),
      [],
      'imports: failures only inside the window, and only as "unavailable"',
    );
    t.ok(
      report.newLeader !== '' && report.newLeader !== report.oldLeader,
      `Patroni promoted ${report.newLeader}`,
    );
    const window = report.firstImportAt - report.killAt;
    t.ok(
      window <= windowBoundMs(SETTINGS),
      `imports succeed again ${Math.round(window)} ms after the kill (ttl ${SETTINGS.ttl} s, loop_wait ${SETTINGS.loopWait} s)`,
    );
    t.ok(report.importsAcknowledged > 0, `${report.importsAcknowledged} imports acknowledged`);
    t.same(report.importsLost, [], 'synchronous_mode: every acknowledged import is on the new leader');
    t.ok(report.tokens.length > 0, `${report.tokens.length} sync tokens taken from the old primary`);
    t.same(
      report.tokens.filter((check) =>
        check.verdict === 'exact delta'
          ? check.expected === 'refused'
          : !(check.verdict === 'refused (410)' && check.expected !== 'exact'),
      ),
      [],
      'each token gives an exact delta, or 410 for rows the new leader lacks',
    );
  },
);

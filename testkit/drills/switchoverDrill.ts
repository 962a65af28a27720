/**
 * The primary switch-over drill: a PostgreSQL 15 primary with two streaming standbys
 * (testkit/replication.ts), API replicas behind HAProxy (apiFleet.ts) with DATABASE_URL naming every
 * node (target_session_attrs=read-write) and DATABASE_READ_URL the standbys, and the rolling drill's
 * load of series and discovery (drillLoad.ts). Beside it, what needs the primary: a key never used
 * before on each request, an import every moment, and a key revoked before the switch; and the
 * primary's sync tokens (syncTokens.ts), each of which must give its exact delta after the switch.
 *
 * The switch is what an HA manager does: stop the primary (fast), promote a standby, point the other
 * standby at it. The report says when the service was whole again, what failed and why, and what
 * must hold (`problems`; none is a PASS).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { revokeKey } from '../fixtures.js';
import type { PgNode, ReplicationCluster } from '../replication.js';
import type { DrillFixture } from './drillFixture.js';
import type { DrillRequest } from './drillLoad.js';
import type { DrillRunOptions, PhaseWindow } from './phases.js';
import {
  importedRounds,
  loadProblems,
  type Probe,
  type ProbeFixture,
  probeProblems,
  startProbedLoad,
} from './primaryProbes.js';
import type { TokenCheck } from './syncTokens.js';

export interface SwitchoverOptions extends DrillRunOptions {
  cluster: ReplicationCluster;
  redisUrl: string;
  fixture: DrillFixture & ProbeFixture;
  /** API replicas behind HAProxy. */
  replicas: number;
}

export interface SwitchoverReport {
  phases: (PhaseWindow & { requests: DrillRequest[]; probes: Probe[] })[];
  stopAt: number;
  /** `pg_ctl stop -m fast` returned. */
  stoppedAt: number;
  /** `pg_ctl promote -w` returned: the standby takes writes. */
  promotedAt: number;
  /** The other standby was pointed at the new primary. */
  followedAt: number;
  /** Every API replica's readiness passed again (primary and reads), for good. */
  wholeAt: number;
  /** The first import after the promotion that succeeded. */
  firstImportAt: number;
  /** Imports that succeeded and whose rows the new primary holds. */
  importsAcknowledged: number;
  importsKept: number;
  /** The other standby replayed a write made on the new primary. */
  followerStreams: boolean;
  /** Each token the primary issued before the switch, and what it gave afterwards: all exact deltas. */
  tokens: TokenCheck[];
  problems: string[];
}

/** The bound: the service is whole again this long after the promotion. */
export const WHOLE_WITHIN_MS = 5000;

async function currentLsn(node: PgNode): Promise<string> {
  const [row] = await node.query((sql) => sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`);
  return row!.lsn;
}

/** Whether `standby` replays what `primary` writes now, within `timeoutMs`. */
async function replays(primary: PgNode, standby: PgNode, timeoutMs: number): Promise<boolean> {
  await primary.query((sql) => sql`select pg_switch_wal()`);
  const lsn = await currentLsn(primary);
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const [row] = await standby.query(
      (sql) => sql<{ caught: boolean }[]>`select pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as caught`,
    );
    if (row?.caught) return true;
    await sleep(100);
  }
  return false;
}

export async function runSwitchoverDrill(options: SwitchoverOptions): Promise<SwitchoverReport> {
  const { cluster, fixture } = options;
  const [promoted, follower] = cluster.standbys;
  if (!promoted || !follower) throw new Error('the switch-over drill needs two standbys');
  const databaseUrl = cluster.url(cluster.nodes, { target_session_attrs: 'read-write' });
  const run = await startProbedLoad({
    ...options,
    databaseUrl,
    databaseReadUrl: cluster.url(cluster.standbys),
    revoke: async () => {
      await cluster.primary.query((sql) => revokeKey(sql, fixture.revokedKeyId));
      await cluster.caughtUp();
    },
  });
  const { imports } = run;
  const documents = run.tokens;
  const moments = {
    stopAt: Number.NaN,
    stoppedAt: Number.NaN,
    promotedAt: Number.NaN,
    followedAt: Number.NaN,
  };
  let wholeAt = Number.NaN;
  let stillNotWhole: string[] = [];
  let followerStreams = false;
  let tokens: TokenCheck[] = [];
  try {
    await run.phase('before', () => sleep(options.settleMs));
    await run.phase('switch-over, until whole', async () => {
      moments.stopAt = performance.now();
      await documents.stopTaking();
      await cluster.primary.stop('fast');
      moments.stoppedAt = performance.now();
      await promoted.promote();
      moments.promotedAt = performance.now();
      await follower.follow(promoted);
      moments.followedAt = performance.now();
      ({ wholeAt, notPassing: stillNotWhole } = await run.readiness.untilWhole(moments.promotedAt, 60_000));
    });
    await run.phase('after', () => sleep(options.settleMs));
    await run.stopLoad();
    followerStreams = await replays(promoted, follower, 10_000);
    // Every standby now holds what the new primary wrote: the deltas and the document agree wherever read.
    tokens = await documents.check(run.base);
  } finally {
    await run.stopLoad();
    await run.close();
  }

  const probes = run.probes();
  const phases = run.phases();
  const firstImportAt =
    imports.probes.find((p) => p.outcome === 'ok' && p.startedAt > moments.promotedAt)?.endedAt ?? Number.NaN;
  const keptRounds = await promoted.query((sql) => importedRounds(sql, fixture.importTube));
  const importsKept = imports.acknowledged.filter(({ round }) => keptRounds.has(round)).length;
  const report: SwitchoverReport = {
    phases,
    ...moments,
    wholeAt,
    firstImportAt,
    importsAcknowledged: imports.acknowledged.length,
    importsKept,
    followerStreams,
    tokens,
    problems: [],
  };
  report.problems = [
    ...judge(report, probes),
    ...stillNotWhole.map((replica) => `not whole a minute after the promotion: ${replica}`),
  ];
  return report;
}

function judge(report: SwitchoverReport, probes: Probe[]): string[] {
  const { stopAt, promotedAt, wholeAt } = report;
  // Series and discovery are read from the standbys: nothing of theirs may fail, not even in the window.
  const problems = loadProblems(report.phases);
  if (!(wholeAt - promotedAt <= WHOLE_WITHIN_MS)) {
    problems.push(`whole again ${Math.round(wholeAt - promotedAt)} ms after the promotion`);
  }
  problems.push(...probeProblems(probes, { from: stopAt, to: wholeAt }));
  if (report.importsKept !== report.importsAcknowledged) {
    problems.push(
      `${report.importsAcknowledged - report.importsKept} of ${report.importsAcknowledged} acknowledged imports lost`,
    );
  }
  if (!report.followerStreams) problems.push('the other standby does not replay the new primary');
  // A planned switch-over keeps every token valid: each gives its exact delta, none a 410.
  if (report.tokens.length === 0) problems.push('no sync token was taken before the switch-over');
  for (const check of report.tokens) {
    if (check.verdict !== 'exact delta') {
      problems.push(
        `a token taken ${Math.round(report.stopAt - check.taken.endedAt)} ms before the stop: HTTP ${check.status}, ${check.verdict}`,
      );
    }
  }
  return problems;
}

/**
 * The crash drill: a Patroni cluster (testkit/patroni.ts: etcd and PostgreSQL 15 nodes under Patroni
 * with deploy/patroni/patroni.yml), API replicas behind HAProxy (apiFleet.ts) with DATABASE_URL naming
 * every node (target_session_attrs=read-write) and DATABASE_READ_URL the standbys, under the switch-over
 * drill's load (drillLoad.ts, primaryProbes.ts). Then the leader's node crashes: its Patroni, its
 * postmaster and every process of its server get SIGKILL at once, so nothing hands the leader key
 * over; Patroni promotes a standby once the key's ttl runs out.
 *
 * Measured: what reads and imports saw, the window from the kill until an import succeeds again
 * against the cluster's ttl and loop_wait, which acknowledged imports the new leader lacks, and what
 * the sync tokens issued by the old primary give afterwards (syncTokens.ts). `problems` says what
 * broke what must hold (none is a PASS).
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { revokeKey } from '../fixtures.js';
import { type PatroniCluster, type PatroniMember, startPatroniCluster } from '../patroni.js';
import type { Owner } from '../processes.js';
import { addDrillFixture, type DrillFixture } from './drillFixture.js';
import type { DrillRequest } from './drillLoad.js';
import type { DrillRunOptions, PhaseWindow } from './phases.js';
import {
  type AcknowledgedImport,
  addProbeFixture,
  freshKeysFor,
  importedRounds,
  loadProblems,
  type Probe,
  type ProbeFixture,
  probeProblems,
  startProbedLoad,
} from './primaryProbes.js';
import type { TokenCheck } from './syncTokens.js';

/** The cluster's settings in Patroni's DCS that decide the crash's window and what it may lose. */
export interface CrashSettings {
  /** A COMMIT waits until a standby has it; Patroni promotes only that standby. */
  synchronousMode: boolean;
  /** Seconds the leader key lives without its leader renewing it. */
  ttl: number;
  /** Seconds between Patroni's rounds. */
  loopWait: number;
  /** Seconds Patroni retries the DCS and PostgreSQL before giving up a round (loop_wait + 2 × it ≤ ttl). */
  retryTimeout: number;
}

export interface CrashOptions extends DrillRunOptions {
  cluster: PatroniCluster;
  redisUrl: string;
  fixture: DrillFixture & ProbeFixture;
  /** API replicas behind HAProxy. */
  replicas: number;
  settings: CrashSettings;
  /**
   * The standbys fall behind for this long before the crash (the primary's WAL senders held), as under
   * a burst of writes or a slow link: what an asynchronous standby lacks when it is promoted, and what a
   * synchronous one makes commits wait for. 0: streaming to the end.
   */
  lagMs: number;
}

/** An acknowledged import the new leader lacks, and how long before the kill it was acknowledged. */
export interface LostImport extends AcknowledgedImport {
  beforeKillMs: number;
}

export interface CrashReport {
  settings: CrashSettings;
  lagMs: number;
  phases: (PhaseWindow & { requests: DrillRequest[]; probes: Probe[] })[];
  oldLeader: string;
  newLeader: string;
  /** The SIGKILLs were sent. */
  killAt: number;
  processesKilled: number;
  /** Patroni first reported a new leader running. */
  leaderAt: number;
  /** The first import begun after the kill that succeeded, done. */
  firstImportAt: number;
  /** Every API replica's readiness passed again (primary and reads), for good. */
  wholeAt: number;
  importsAcknowledged: number;
  importsLost: LostImport[];
  /** The import client's uncaught writes to a closed connection (primaryProbes.ts, importProbes). */
  importWritesAfterClose: number;
  /** Each token taken from the old primary, what it gave, and what it must give. */
  tokens: (TokenCheck & { expected: TokenExpectation })[];
  problems: string[];
}

/**
 * What a token must give: 410 when the new leader lacks rows it held; an exact delta when an import the
 * old primary acknowledged, begun after the token, survived (the new leader's history holds the token's
 * place); either when neither is known.
 */
export type TokenExpectation = 'refused' | 'exact' | 'exact or refused';

/** How long past ttl + loop_wait (plus the promotion) the window may last before it is a failure. */
export const WINDOW_SLACK_MS = 5000;
const POLL_MS = 100;

/** The bound the window is held to: the key's ttl, a round of Patroni, and the slack. */
export const windowBoundMs = (settings: CrashSettings) =>
  (settings.ttl + settings.loopWait) * 1000 + WINDOW_SLACK_MS;

const dcsSettings = (settings: CrashSettings) => ({
  ttl: settings.ttl,
  loop_wait: settings.loopWait,
  retry_timeout: settings.retryTimeout,
  synchronous_mode: settings.synchronousMode,
});

/**
 * Applies `settings` to the cluster and waits until every node runs by them: a round of the slowest
 * loop, and in synchronous mode a standby that Patroni made synchronous (none otherwise).
 */
export async function configureCluster(
  cluster: PatroniCluster,
  settings: CrashSettings,
  previousLoopWait: number,
) {
  await cluster.configure(dcsSettings(settings));
  await sleep((Math.max(previousLoopWait, settings.loopWait) + 1) * 1000);
  const deadline = performance.now() + 60_000;
  for (;;) {
    const members = await cluster.members();
    const synchronous = members.filter((member) => member.role === 'sync_standby').length;
    if (settings.synchronousMode ? synchronous === 1 : synchronous === 0) return;
    if (performance.now() > deadline) throw new Error(`Patroni did not apply ${JSON.stringify(settings)}`);
    await sleep(POLL_MS * 5);
  }
}

export interface ImportSpeed {
  synchronousMode: boolean;
  /** Rows per import and imports run one after the other. */
  rows: number;
  imports: number;
  /** The median import's duration. */
  medianMs: number;
  rowsPerSecond: number;
}

/**
 * Import speed on the quiet cluster: `imports` imports of `rows` rows each, one after the other, as
 * `gwapi import measurements` runs them, each into rows of its own (a new measurement is written, not
 * found unchanged).
 */
export async function measureImportSpeed(
  databaseUrl: string,
  tube: string,
  synchronousMode: boolean,
  { rows, imports, from }: { rows: number; imports: number /** After IMPORTS_TO. */; from: string },
): Promise<ImportSpeed> {
  const sql = connect(databaseUrl, { max: 1, applicationName: 'crash drill (import speed)' });
  try {
    const durations: number[] = [];
    for (let n = 0; n < imports; n++) {
      const lines = Array.from({ length: rows }, (_, i) => {
        const at = new Date(Date.parse(from) + (n * rows + i) * 60_000).toISOString();
        return `${tube},${at},${n}`;
      });
      const started = performance.now();
      await importMeasurements(sql, Readable.from(`tubeIdentifier,observedAt,value\n${lines.join('\n')}\n`), {
        name: `speed ${n}`,
      });
      durations.push(performance.now() - started);
    }
    const sorted = [...durations].sort((a, b) => a - b);
    const total = durations.reduce((sum, d) => sum + d, 0);
    return {
      synchronousMode,
      rows,
      imports,
      medianMs: sorted[Math.floor(sorted.length / 2)]!,
      rowsPerSecond: (rows * imports) / (total / 1000),
    };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * A Patroni cluster of three nodes, migrated, with the drill's fixture: `keys` load keys, and fresh keys
 * enough for `settleMs` twice and the window `settings` allow.
 */
export async function startCrashCluster(options: {
  keys: number;
  settleMs: number;
  settings: CrashSettings;
  owner?: Owner;
}): Promise<{ cluster: PatroniCluster; fixture: DrillFixture & ProbeFixture }> {
  const cluster = await startPatroniCluster({ nodes: 3, owner: options.owner });
  const sql = connect(cluster.url({ target_session_attrs: 'read-write' }), { max: 1 });
  try {
    await migrate(sql);
    const drill = await addDrillFixture(sql, { keys: options.keys, holders: 0 });
    const fresh = freshKeysFor(options.settleMs, windowBoundMs(options.settings) + 60_000);
    return { cluster, fixture: { ...drill, ...(await addProbeFixture(sql, drill, fresh)) } };
  } catch (error) {
    await cluster.stop();
    throw error;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Waits until every node `named` (the new leader among them) replays what the leader has written;
 * undefined, or where each stood after `timeoutMs`.
 */
async function untilReplayed(
  cluster: PatroniCluster,
  leaderUrl: string,
  named: string[],
  timeoutMs: number,
): Promise<string | undefined> {
  const leaderSql = connect(leaderUrl, { max: 1 });
  const nodes = named.map((name) => connect(cluster.url({}, [name]), { max: 1 }));
  try {
    const [written] = await leaderSql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
    const deadline = performance.now() + timeoutMs;
    let positions: string[] = [];
    while (performance.now() < deadline) {
      const caught = await Promise.all(
        nodes.map(async (sql) => {
          const [row] = await sql<{ caught: boolean; lsn: string }[]>`
            select lsn::text, lsn >= ${written!.lsn}::pg_lsn as caught from (
              select case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_lsn() end as lsn
            ) as here`;
          return row!;
        }),
      );
      if (caught.every((row) => row.caught)) return undefined;
      positions = caught.map((row, i) => `${named[i]} at ${row.lsn}`);
      await sleep(POLL_MS);
    }
    return `the leader wrote up to ${written!.lsn}; ${positions.join(', ')}; Patroni: ${JSON.stringify(await cluster.members())}`;
  } finally {
    await Promise.all([leaderSql, ...nodes].map((sql) => sql.end({ timeout: 1 })));
  }
}

async function leader(cluster: PatroniCluster): Promise<PatroniMember> {
  const found = (await cluster.members()).find((member) => member.role === 'leader');
  if (!found) throw new Error('no Patroni leader');
  return found;
}

/** Polls Patroni until a leader other than `old` runs; the moment it was first seen, or NaN. */
async function untilNewLeader(cluster: PatroniCluster, old: string, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const found = (await cluster.members()).find(
      (member) => member.role === 'leader' && member.name !== old && member.state === 'running',
    );
    if (found) return { at: performance.now(), name: found.name };
    await sleep(POLL_MS);
  }
  return { at: Number.NaN, name: '' };
}

export async function runCrashDrill(options: CrashOptions): Promise<CrashReport> {
  const { cluster, fixture, settings } = options;
  const oldLeader = (await leader(cluster)).name;
  const standbys = cluster.names.filter((name) => name !== oldLeader);
  const databaseUrl = cluster.url({ target_session_attrs: 'read-write' });
  const run = await startProbedLoad({
    ...options,
    databaseUrl,
    databaseReadUrl: cluster.url({}, standbys),
    revoke: async () => {
      const sql = connect(databaseUrl, { max: 1 });
      await revokeKey(sql, fixture.revokedKeyId);
      await sql.end({ timeout: 1 });
    },
  });
  const { imports } = run;
  const documents = run.tokens;
  let killAt = Number.NaN;
  let processesKilled = 0;
  let elected = { at: Number.NaN, name: '' };
  let firstImportAt = Number.NaN;
  let wholeAt = Number.NaN;
  let stillNotWhole: string[] = [];
  const bound = windowBoundMs(settings);
  let resumeStreaming = () => {};
  let tokens: TokenCheck[] = [];
  let keptRounds = new Set<number>();
  let notReplaying: string | undefined = 'not asked';
  try {
    await run.phase('before', () => sleep(options.settleMs));
    if (options.lagMs > 0) {
      await run.phase('standbys held', async () => {
        resumeStreaming = await cluster.holdWalSenders(oldLeader);
        await sleep(options.lagMs);
      });
    }
    await run.phase('crash, until imports succeed', async () => {
      killAt = performance.now();
      processesKilled = (await cluster.crash(oldLeader)).length;
      resumeStreaming();
      await documents.stopTaking();
      const electing = untilNewLeader(cluster, oldLeader, bound + 60_000);
      for (;;) {
        const done = imports.acknowledged.find((ack) => ack.startedAt > killAt);
        if (done) {
          firstImportAt = done.endedAt;
          break;
        }
        if (performance.now() > killAt + bound + 60_000) break;
        await sleep(POLL_MS);
      }
      elected = await electing;
    });
    await run.phase('after', async () => {
      ({ wholeAt, notPassing: stillNotWhole } = await run.readiness.untilWhole(
        Number.isNaN(elected.at) ? killAt : elected.at,
        60_000,
      ));
      await sleep(options.settleMs);
    });
    resumeStreaming();
    await Promise.all([run.stopLoad(), documents.stopTaking()]);

    const newPrimary = connect(databaseUrl, { max: 1 });
    keptRounds = await importedRounds(newPrimary, fixture.importTube);
    await newPrimary.end({ timeout: 1 });
    // The deltas and the document they are held to must come from nodes that hold the same writes.
    notReplaying = await untilReplayed(cluster, databaseUrl, standbys, 30_000);
    tokens = await documents.check(run.base);
  } finally {
    resumeStreaming();
    await run.stopLoad();
    await run.close();
  }

  const probes = run.probes();
  const phases = run.phases();
  const importsLost = imports.acknowledged
    .filter(({ round }) => !keptRounds.has(round))
    .map((ack) => ({ ...ack, beforeKillMs: killAt - ack.endedAt }));
  const report: CrashReport = {
    settings,
    lagMs: options.lagMs,
    phases,
    oldLeader,
    newLeader: elected.name,
    killAt,
    processesKilled,
    leaderAt: elected.at,
    firstImportAt,
    wholeAt,
    importsAcknowledged: imports.acknowledged.length,
    importsLost,
    importWritesAfterClose: imports.writesAfterClose(),
    tokens: tokens.map((check) => ({
      ...check,
      expected: tokenExpectation(check, imports.acknowledged, keptRounds, killAt),
    })),
    problems: [],
  };
  report.problems = [
    ...judge(report, probes),
    ...(notReplaying ? [`the standby left does not replay the new leader within 30 s: ${notReplaying}`] : []),
    ...stillNotWhole.map((replica) => `not whole a minute after the new leader: ${replica}`),
  ];
  return report;
}

function tokenExpectation(
  check: TokenCheck,
  acknowledged: AcknowledgedImport[],
  keptRounds: Set<number>,
  killAt: number,
): TokenExpectation {
  const lacks = [...check.taken.rows.values()].some((round) => !keptRounds.has(round));
  if (lacks) return 'refused';
  const laterSurvived = acknowledged.some(
    (ack) => ack.startedAt > check.taken.endedAt && ack.endedAt < killAt && keptRounds.has(ack.round),
  );
  return laterSurvived ? 'exact' : 'exact or refused';
}

function judge(report: CrashReport, probes: Probe[]): string[] {
  const { killAt, firstImportAt, settings } = report;
  // Series and discovery are read from the standbys: nothing of theirs may fail, not even in the window.
  const problems = loadProblems(report.phases);
  // Keys never used are looked up on a standby while there is no primary: none may fail either.
  for (const probe of probes) {
    if (probe.kind === 'fresh key' && probe.outcome !== 'ok')
      problems.push(`a fresh key failed (${probe.cause})`);
  }
  if (!(firstImportAt - killAt <= windowBoundMs(settings))) {
    problems.push(
      `imports succeeded again ${Math.round(firstImportAt - killAt)} ms after the kill, beyond ttl + loop_wait ` +
        `(${settings.ttl} + ${settings.loopWait} s) and ${WINDOW_SLACK_MS} ms`,
    );
  }
  problems.push(...probeProblems(probes, { from: killAt, to: firstImportAt }));
  if (settings.synchronousMode && report.importsLost.length > 0) {
    problems.push(
      `synchronous mode: ${report.importsLost.length} of ${report.importsAcknowledged} acknowledged imports lost`,
    );
  }
  if (report.tokens.length === 0) problems.push('no sync token was taken before the crash');
  for (const check of report.tokens) {
    const { expected } = check;
    const fine =
      check.verdict === 'exact delta'
        ? expected !== 'refused'
        : check.verdict === 'refused (410)' && expected !== 'exact';
    if (!fine) {
      problems.push(
        `a token taken ${Math.round(killAt - check.taken.endedAt)} ms before the kill: HTTP ${check.status}, ` +
          `${check.verdict}${check.verdict === 'wrong delta' ? ` (${check.extra} rows too many, of imports ${check.extraValues.join(' ')}; ${check.missing} missing, of imports ${check.missingValues.join(' ')}; it held imports up to ${Math.max(-1, ...check.taken.rows.values())})` : ''}, ` +
          `where it must be ${expected === 'refused' ? '410: the new leader lacks rows it held' : 'an exact delta'}`,
      );
    }
  }
  return problems;
}

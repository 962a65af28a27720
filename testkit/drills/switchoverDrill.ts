/**
 * The primary switch-over drill: a PostgreSQL 15 primary with two streaming standbys
 * (testkit/replication.ts), API replicas behind HAProxy (apiFleet.ts) with DATABASE_URL naming every
 * node (target_session_attrs=read-write) and DATABASE_READ_URL the standbys, and the rolling drill's
 * load of series and discovery (drillLoad.ts). Beside it, what needs the primary: a key never used
 * before on each request, an import every moment, and a key revoked before the switch.
 *
 * The switch is what an HA manager does: stop the primary (fast), promote a standby, point the other
 * standby at it. The report says when the service was whole again, what failed and why, and what
 * must hold (`problems`; none is a PASS).
 */
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadSettings } from '../../src/config.js';
import { connect, type Sql } from '../../src/db/connect.js';
import { isDatabaseUnavailable } from '../../src/db/errorCodes.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { hashApiKey } from '../../src/keys/format.js';
import { WELLS_PATH } from '../apiPaths.js';
import { addKey, addWell, revokeKey } from '../fixtures.js';
import type { PgNode, ReplicationCluster } from '../replication.js';
import { startApiFleet } from './apiFleet.js';
import { countedGet } from './countedGet.js';
import { type DrillFixture, drillTarget } from './drillFixture.js';
import { type DrillRequest, steadyLoad } from './drillLoad.js';
import { type DrillRunOptions, type PhaseWindow, phaseClock } from './phases.js';

export interface SwitchoverFixture {
  /** Keys no replica has seen: each is used once, so its lookup must reach a database. */
  freshKeys: string[];
  /** Used on every API replica, then revoked, before the switch. */
  revokedKey: string;
  revokedKeyId: string;
  /** Registered for the imports, seen by no load key. */
  importTube: string;
}

export interface SwitchoverOptions extends DrillRunOptions {
  cluster: ReplicationCluster;
  redisUrl: string;
  fixture: DrillFixture & SwitchoverFixture;
  /** API replicas behind HAProxy. */
  replicas: number;
}

/** A request (or import) that needs the primary, or a key that must stay refused. */
export interface Probe {
  kind: 'fresh key' | 'revoked key' | 'import';
  startedAt: number;
  endedAt: number;
  outcome: 'ok' | 'failed';
  cause?: string;
  /** A failure the contract allows inside the window: 503 with Retry-After, or a database unavailable. */
  expected?: boolean;
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
  problems: string[];
}

/** The issue's bound: the service is whole again this long after the promotion. */
export const WHOLE_WITHIN_MS = 5000;
const FRESH_PERIOD_MS = 200;
const REVOKED_PERIOD_MS = 250;
const IMPORT_PERIOD_MS = 250;
const READY_POLL_MS = 100;
/** How long readiness reuses a database answer (src/health/readiness.ts, its default). */
const READINESS_REUSE_MS = 1000;
const IMPORT_ROWS = 10;
const STALL_MS = 15_000;
/** After KEY_CACHE_SECONDS, so that no replica still holds the key as it was before its revocation. */
const CACHE_SLACK_MS = 500;

/** How many fresh keys a run of `settleMs` twice and the switch uses up, with room to spare. */
export const freshKeysFor = (settleMs: number) => Math.ceil((2 * settleMs + 30_000) / FRESH_PERIOD_MS);

/** Keys and a tube for the drill's probes, on the primary, granted what the first load key is. */
export async function addSwitchoverFixture(
  sql: Sql,
  fixture: DrillFixture,
  freshKeys: number,
): Promise<SwitchoverFixture> {
  const like = hashApiKey(fixture.loadKeys[0]!);
  const grantedLikeTheLoad = async () => {
    const added = await addKey(sql);
    await sql`
      insert into api_key_grants (key_id, tube_id)
      select ${added.keyId}, g.tube_id from api_key_grants g join api_keys k on k.id = g.key_id
      where k.key_hash = ${like}`;
    return added;
  };
  const fresh: string[] = [];
  for (let i = 0; i < freshKeys; i++) fresh.push((await grantedLikeTheLoad()).key);
  const revoked = await grantedLikeTheLoad();
  const [tube] = await addWell(sql, 'Switch-over imports', [{ number: '1' }]);
  return {
    freshKeys: fresh,
    revokedKey: revoked.key,
    revokedKeyId: revoked.keyId,
    importTube: tube!.identifier,
  };
}

/** Calls `work` every `periodMs` until stopped, keeping what each call recorded. */
function every(periodMs: number, work: () => Promise<Probe>) {
  const probes: Probe[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      probes.push(await work());
      const wait = started + periodMs - performance.now();
      if (wait > 0 && running) await sleep(wait);
    }
  })();
  return {
    probes,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** A discovery request through HAProxy with `key`, judged by `judge`. */
async function discovery(
  base: string,
  key: string,
  kind: Probe['kind'],
  judge: (
    status: number,
    headers: Record<string, unknown>,
    body: string,
  ) => Omit<Probe, 'kind' | 'startedAt' | 'endedAt'>,
): Promise<Probe> {
  const agent = new Agent({ keepAlive: false });
  const startedAt = performance.now();
  try {
    const response = await countedGet(
      agent,
      `${base}${WELLS_PATH}`,
      { 'x-api-key': key },
      {
        keepBody: true,
        stallMs: STALL_MS,
      },
    );
    const judged = judge(response.status, response.headers, response.body?.toString() ?? '');
    return { kind, startedAt, endedAt: performance.now(), ...judged };
  } catch (error) {
    return {
      kind,
      startedAt,
      endedAt: performance.now(),
      outcome: 'failed',
      cause: (error as Error).message,
    };
  } finally {
    agent.destroy();
  }
}

/** A key never used before: its lookup needs a database. 503 must carry Retry-After to be allowed. */
function freshKeyProbes(base: string, keys: string[], wells: number) {
  let next = 0;
  return every(FRESH_PERIOD_MS, () =>
    discovery(base, keys[next++ % keys.length]!, 'fresh key', (status, headers, body) => {
      if (status === 200) {
        const listed = (JSON.parse(body) as unknown[]).length;
        return listed === wells
          ? { outcome: 'ok' }
          : { outcome: 'failed', cause: `${listed} wells, not ${wells}` };
      }
      const problem = String(headers['content-type']).startsWith('application/problem+json');
      const retryAfter = headers['retry-after'];
      const expected = status === 503 && problem && Number(retryAfter) >= 1;
      return {
        outcome: 'failed',
        cause: `HTTP ${status}${retryAfter ? ` (Retry-After ${retryAfter})` : ''}${problem ? '' : ' (HAProxy)'}`,
        expected,
      };
    }),
  );
}

/** A key revoked before the switch: every answer must be 401, never data. */
function revokedKeyProbes(base: string, key: string) {
  return every(REVOKED_PERIOD_MS, () =>
    discovery(base, key, 'revoked key', (status) =>
      status === 401 ? { outcome: 'ok' } : { outcome: 'failed', cause: `HTTP ${status}` },
    ),
  );
}

/**
 * An import of a few rows every moment through DATABASE_URL, as `gwapi import measurements` does it
 * (importMeasurements on a pool of connect()): each at minutes of its own, so what was acknowledged
 * can be found on the new primary afterwards.
 */
function importProbes(databaseUrl: string, tube: string) {
  const sql = connect(databaseUrl, { max: 1, applicationName: 'switch-over drill (imports)' });
  const acknowledged: number[] = [];
  let round = 0;
  const probes = every(IMPORT_PERIOD_MS, async () => {
    const n = round++;
    const csv = Array.from({ length: IMPORT_ROWS }, (_, i) => {
      const at = new Date(Date.UTC(2030, 0, 1) + (n * IMPORT_ROWS + i) * 60_000).toISOString();
      return `${tube},${at},${n}`;
    });
    const startedAt = performance.now();
    try {
      await importMeasurements(sql, Readable.from(`tubeIdentifier,observedAt,value\n${csv.join('\n')}\n`), {
        name: `round ${n}`,
      });
      acknowledged.push(n);
      return { kind: 'import' as const, startedAt, endedAt: performance.now(), outcome: 'ok' as const };
    } catch (error) {
      const code = (error as { code?: string }).code;
      return {
        kind: 'import' as const,
        startedAt,
        endedAt: performance.now(),
        outcome: 'failed' as const,
        cause: code ?? (error as Error).message,
        expected: isDatabaseUnavailable(error),
      };
    }
  });
  return {
    probes: probes.probes,
    acknowledged,
    async stop() {
      await probes.stop();
      await sql.end({ timeout: 1 });
    },
  };
}

/**
 * Each API replica's readiness, straight (not through HAProxy), in rounds every READY_POLL_MS: when
 * every replica passed in one round, and what the others last said.
 */
function readinessWatch(bases: string[]) {
  const rounds: { startedAt: number; allPass: boolean }[] = [];
  /** Each replica's last answer that was not a pass: what a FAIL shows. */
  const lastNotPassing: (string | undefined)[] = bases.map(() => undefined);
  const passing: boolean[] = bases.map(() => false);
  let running = true;
  const loop = (async () => {
    while (running) {
      const startedAt = performance.now();
      await Promise.all(
        bases.map(async (base, i) => {
          const agent = new Agent({ keepAlive: false });
          let pass = false;
          try {
            const response = await countedGet(
              agent,
              `${base}/health/ready`,
              {},
              { keepBody: true, stallMs: 5000 },
            );
            const body = response.body!.toString();
            pass = response.status === 200 && JSON.parse(body).status === 'pass';
            if (!pass) lastNotPassing[i] = `${response.status} ${body}`;
          } catch (error) {
            lastNotPassing[i] = (error as Error).message;
          } finally {
            agent.destroy();
          }
          passing[i] = pass;
        }),
      );
      rounds.push({ startedAt, allPass: passing.every(Boolean) });
      await sleep(READY_POLL_MS);
    }
  })();
  return {
    /**
     * The start of the first round begun at or after `after` in which every replica passed, when every
     * round since passed too; undefined otherwise.
     */
    wholeSince(after: number): number | undefined {
      const first = rounds.findIndex((round) => round.startedAt >= after && round.allPass);
      if (first === -1 || !rounds.slice(first).every((round) => round.allPass)) return undefined;
      return rounds[first]!.startedAt;
    },
    /** The replicas not passing in the last round, with their last answer. */
    notPassing: () => bases.flatMap((base, i) => (passing[i] ? [] : [`${base}: ${lastNotPassing[i]}`])),
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * Every API replica caches the key as valid, then it is revoked on the primary and the caches run out:
 * from then on only a database can say it is revoked, and through the switch it must keep saying so.
 */
async function revokeWhileCached(cluster: ReplicationCluster, bases: string[], fixture: SwitchoverFixture) {
  for (const base of bases) {
    const answer = await discovery(base, fixture.revokedKey, 'revoked key', (status) =>
      status === 200 ? { outcome: 'ok' } : { outcome: 'failed', cause: `HTTP ${status}` },
    );
    if (answer.outcome !== 'ok') throw new Error(`the key to revoke was refused before: ${answer.cause}`);
  }
  await cluster.primary.query((sql) => revokeKey(sql, fixture.revokedKeyId));
  await cluster.caughtUp();
  await sleep(loadSettings({}).KEY_CACHE_SECONDS * 1000 + CACHE_SLACK_MS);
}

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
  const { cluster, fixture, log = () => {} } = options;
  const [promoted, follower] = cluster.standbys;
  if (!promoted || !follower) throw new Error('the switch-over drill needs two standbys');
  const databaseUrl = cluster.url(cluster.nodes, { target_session_attrs: 'read-write' });
  const fleet = await startApiFleet({
    replicas: options.replicas,
    databaseUrl,
    databaseReadUrl: cluster.url(cluster.standbys),
    redisUrl: options.redisUrl,
    folder: options.folder,
    // The revoked key is asked for every moment from one address: not what the failed-key limit is for.
    env: { FAILED_AUTH_LIMIT: '1000000' },
    owner: options.owner,
    watch: options.watch,
  });
  const base = fleet.haproxy.base;
  const bases = fleet.ports.map((port) => `http://127.0.0.1:${port}`);
  await revokeWhileCached(cluster, bases, fixture);
  // Before the loads start, so that each of their requests falls in a phase.
  const { windows, phase } = phaseClock<object>(log);
  const readiness = readinessWatch(bases);
  const load = steadyLoad(drillTarget(base, fixture), fixture.loadKeys, options.periodMs);
  const fresh = freshKeyProbes(base, fixture.freshKeys, fixture.wells);
  const revoked = revokedKeyProbes(base, fixture.revokedKey);
  const imports = importProbes(databaseUrl, fixture.importTube);
  const moments = {
    stopAt: Number.NaN,
    stoppedAt: Number.NaN,
    promotedAt: Number.NaN,
    followedAt: Number.NaN,
  };
  let wholeAt = Number.NaN;
  let stillNotWhole: string[] = [];
  try {
    await phase('before', () => sleep(options.settleMs, undefined));
    await phase('switch-over, until whole', async () => {
      moments.stopAt = performance.now();
      await cluster.primary.stop('fast');
      moments.stoppedAt = performance.now();
      await promoted.promote();
      moments.promotedAt = performance.now();
      await follower.follow(promoted);
      moments.followedAt = performance.now();
      const deadline = moments.promotedAt + 60_000;
      for (;;) {
        // A readiness answer may be one reused from before the promotion: only later rounds count.
        const since = readiness.wholeSince(moments.promotedAt + READINESS_REUSE_MS);
        if (since !== undefined) {
          wholeAt = since;
          break;
        }
        if (performance.now() > deadline) {
          stillNotWhole = readiness.notPassing();
          break;
        }
        await sleep(READY_POLL_MS);
      }
      return undefined;
    });
    await phase('after', () => sleep(options.settleMs, undefined));
  } finally {
    await Promise.all([load.stop(), fresh.stop(), revoked.stop(), imports.stop(), readiness.stop()]);
    await fleet.stop();
  }

  const probes = [...fresh.probes, ...revoked.probes, ...imports.probes];
  const phases = windows.map((window) => ({
    ...window,
    requests: load.between(window.from, window.to),
    probes: probes.filter((p) => p.startedAt >= window.from && p.startedAt < window.to),
  }));
  const firstImportAt =
    imports.probes.find((p) => p.outcome === 'ok' && p.startedAt > moments.promotedAt)?.endedAt ?? Number.NaN;
  const kept = await promoted.query(
    (sql) => sql<{ value: number }[]>`
      select distinct m.value::int as value from measurements m join tubes t on t.id = m.tube_id
      where t.identifier = ${fixture.importTube}::uuid`,
  );
  const keptRounds = new Set(kept.map((row) => row.value));
  const importsKept = imports.acknowledged.filter((n) => keptRounds.has(n)).length;
  const followerStreams = await replays(promoted, follower, 10_000);
  const report: SwitchoverReport = {
    phases,
    ...moments,
    wholeAt,
    firstImportAt,
    importsAcknowledged: imports.acknowledged.length,
    importsKept,
    followerStreams,
    problems: [],
  };
  report.problems = [
    ...judge(report, load.requests, probes),
    ...stillNotWhole.map((replica) => `not whole a minute after the promotion: ${replica}`),
  ];
  return report;
}

function judge(report: SwitchoverReport, requests: DrillRequest[], probes: Probe[]): string[] {
  const problems: string[] = [];
  const { stopAt, promotedAt, wholeAt } = report;
  for (const { phase, requests: inPhase } of report.phases) {
    if (inPhase.length === 0) problems.push(`${phase}: no request of the load ran`);
  }
  // Series and discovery are read from the standbys: nothing of theirs may fail, not even in the window.
  for (const request of requests) {
    if (request.outcome !== 'ok')
      problems.push(`a ${request.kind} request was ${request.outcome} (${request.cause ?? ''})`);
  }
  if (!(wholeAt - promotedAt <= WHOLE_WITHIN_MS)) {
    problems.push(`whole again ${Math.round(wholeAt - promotedAt)} ms after the promotion`);
  }
  for (const probe of probes) {
    if (probe.outcome === 'ok') continue;
    // In the window: it ended after the stop began and began before the service was whole.
    const inWindow = probe.endedAt >= stopAt && probe.startedAt <= wholeAt;
    if (!inWindow) problems.push(`outside the window, a ${probe.kind} request failed (${probe.cause})`);
    else if (!probe.expected)
      problems.push(`a ${probe.kind} request failed, not as allowed (${probe.cause})`);
  }
  for (const kind of ['fresh key', 'revoked key', 'import'] as const) {
    const after = probes.filter((p) => p.kind === kind && p.startedAt > wholeAt);
    if (after.length === 0) problems.push(`no ${kind} request after the service was whole`);
  }
  if (report.importsKept !== report.importsAcknowledged) {
    problems.push(
      `${report.importsAcknowledged - report.importsKept} of ${report.importsAcknowledged} acknowledged imports lost`,
    );
  }
  if (!report.followerStreams) problems.push('the other standby does not replay the new primary');
  return problems;
}

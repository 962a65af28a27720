/**
 * What needs the primary, or a database's word, beside the drills' steady load, as the switch-over and
 * crash drills run it: a key never used before on each request, a key revoked before the drill's step,
 * an import every moment through DATABASE_URL, and each API replica's readiness. Each probe is recorded
 * with its start, end and, when it failed, why and whether the contract allows that failure while there
 * is no primary.
 */
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadSettings } from '../../src/config.js';
import { connect, type Sql } from '../../src/db/connect.js';
import { isDatabaseUnavailable, isWriteOnClosedConnection } from '../../src/db/errorCodes.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { hashApiKey } from '../../src/keys/format.js';
import { WELLS_PATH } from '../apiPaths.js';
import { addKey, addWell } from '../fixtures.js';
import { startApiFleet } from './apiFleet.js';
import { countedGet } from './countedGet.js';
import { type DrillFixture, drillTarget } from './drillFixture.js';
import { type DrillRequest, steadyLoad } from './drillLoad.js';
import { type DrillRunOptions, type PhaseWindow, phaseClock } from './phases.js';
import { primaryTokens } from './syncTokens.js';
import { every } from './timedLoops.js';

export interface ProbeFixture {
  /** Keys no replica has seen: each is used once, so its lookup must reach a database. */
  freshKeys: string[];
  /** Used on every API replica, then revoked, before the drill's step. */
  revokedKey: string;
  revokedKeyId: string;
  /** Registered for the imports, seen by no load key. */
  importTube: string;
  /** Reads the import tube alone: its network responses are the imports, with their sync tokens. */
  importTubeKey: string;
}

/** A request (or import) that needs the primary, or a key that must stay refused. */
export interface Probe {
  kind: 'fresh key' | 'revoked key' | 'import';
  startedAt: number;
  endedAt: number;
  outcome: 'ok' | 'failed';
  cause?: string;
  /**
   * A failure the contract allows while there is no primary: a 503 problem with Retry-After, or a
   * database unavailable.
   */
  expected?: boolean;
}

/** An import the service acknowledged: its round is the value of each of its rows. */
export interface AcknowledgedImport {
  round: number;
  startedAt: number;
  endedAt: number;
}

const FRESH_PERIOD_MS = 200;
const REVOKED_PERIOD_MS = 250;
const IMPORT_PERIOD_MS = 250;
const READY_POLL_MS = 100;
/** How long readiness reuses a database answer (src/health/readiness.ts, its default). */
export const READINESS_REUSE_MS = 1000;
const IMPORT_ROWS = 10;
/** The imports' rows begin here, each round a few minutes after the last: far from the load's data. */
export const IMPORTS_FROM = '2030-01-01T00:00:00Z';
export const IMPORTS_TO = '2031-01-01T00:00:00Z';
const STALL_MS = 15_000;
/** After KEY_CACHE_SECONDS, so that no replica still holds the key as it was before its revocation. */
const CACHE_SLACK_MS = 500;

/** How many fresh keys a run of `settleMs` twice and a window of `windowMs` use up, with room to spare. */
export const freshKeysFor = (settleMs: number, windowMs = 30_000) =>
  Math.ceil((2 * settleMs + windowMs) / FRESH_PERIOD_MS);

/** Keys and a tube for the probes, on the primary, granted what the first load key is. */
export async function addProbeFixture(
  sql: Sql,
  fixture: DrillFixture,
  freshKeys: number,
): Promise<ProbeFixture> {
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
  const [tube] = await addWell(sql, 'Drill imports', [{ number: '1' }]);
  const importTubeKey = await addKey(sql, { tubeIds: [tube!.id] });
  return {
    freshKeys: fresh,
    revokedKey: revoked.key,
    revokedKeyId: revoked.keyId,
    importTube: tube!.identifier,
    importTubeKey: importTubeKey.key,
  };
}

type Judged = Omit<Probe, 'kind' | 'startedAt' | 'endedAt'>;

/** A discovery request through HAProxy with `key`, judged by `judge`. */
async function discovery(
  base: string,
  key: string,
  kind: Probe['kind'],
  judge: (status: number, headers: Record<string, unknown>, body: string) => Judged,
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

/**
 * A failed answer as the contract allows it while there is no primary: 503, `Retry-After` of at least a
 * second, and a problem document that says 503 (not HAProxy's page, not a 500).
 */
export function unavailableAnswer(status: number, headers: Record<string, unknown>, body: string): Judged {
  const retryAfter = headers['retry-after'];
  let problemStatus: unknown;
  if (String(headers['content-type']).startsWith('application/problem+json')) {
    try {
      problemStatus = (JSON.parse(body) as { status?: unknown }).status;
    } catch {}
  }
  const problem = problemStatus === status;
  return {
    outcome: 'failed',
    cause: `HTTP ${status}${retryAfter ? ` (Retry-After ${retryAfter})` : ''}${problem ? '' : ' (no problem document)'}`,
    expected: status === 503 && problem && Number(retryAfter) >= 1,
  };
}

/** A key never used before: its lookup needs a database. */
export function freshKeyProbes(base: string, keys: string[], wells: number) {
  let next = 0;
  return every<Probe>(FRESH_PERIOD_MS, () =>
    discovery(base, keys[next++ % keys.length]!, 'fresh key', (status, headers, body) => {
      if (status !== 200) return unavailableAnswer(status, headers, body);
      const listed = (JSON.parse(body) as unknown[]).length;
      return listed === wells
        ? { outcome: 'ok' }
        : { outcome: 'failed', cause: `${listed} wells, not ${wells}` };
    }),
  );
}

/** A key revoked before the drill's step: every answer must be 401, never data. */
export function revokedKeyProbes(base: string, key: string) {
  return every<Probe>(REVOKED_PERIOD_MS, () =>
    discovery(base, key, 'revoked key', (status) =>
      status === 401 ? { outcome: 'ok' } : { outcome: 'failed', cause: `HTTP ${status}` },
    ),
  );
}

/**
 * An import of a few rows every moment through DATABASE_URL, as `gwapi import measurements` does it
 * (importMeasurements on a pool of connect()): each round's rows at minutes of their own and with the
 * round as their value, so what was acknowledged can be looked for on the new primary afterwards.
 */
export function importProbes(databaseUrl: string, tube: string) {
  const sql = connect(databaseUrl, { max: 1, applicationName: 'drill imports' });
  const acknowledged: AcknowledgedImport[] = [];
  // postgres.js 3.4.9 (issues #1154, #1208) can write to a connection the server closed a moment
  // before, from a timer: an uncaught TypeError that ends the process (`gwapi import` then says in one
  // line that its connection was lost: src/program.ts).
  // The import it belonged to has already failed (CONNECTION_CLOSED); counted, so the drill goes on.
  let writesAfterClose = 0;
  const onUncaught = (error: Error) => {
    if (!isWriteOnClosedConnection(error)) throw error;
    writesAfterClose++;
  };
  process.on('uncaughtException', onUncaught);
  let round = 0;
  const probes = every<Probe>(IMPORT_PERIOD_MS, async () => {
    const n = round++;
    const csv = Array.from({ length: IMPORT_ROWS }, (_, i) => {
      const at = new Date(Date.parse(IMPORTS_FROM) + (n * IMPORT_ROWS + i) * 60_000).toISOString();
      return `${tube},${at},${n}`;
    });
    const startedAt = performance.now();
    try {
      await importMeasurements(sql, Readable.from(`tubeIdentifier,observedAt,value\n${csv.join('\n')}\n`), {
        name: `round ${n}`,
      });
      const endedAt = performance.now();
      acknowledged.push({ round: n, startedAt, endedAt });
      return { kind: 'import' as const, startedAt, endedAt, outcome: 'ok' as const };
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
    probes: probes.done,
    acknowledged,
    /** Uncaught writes to a closed connection in the import client (above). */
    writesAfterClose: () => writesAfterClose,
    async stop() {
      await probes.stop();
      await sql.end({ timeout: 1 });
      process.off('uncaughtException', onUncaught);
    },
  };
}

/** The import rounds whose rows `sql`'s database holds (other writes to the tube lie outside their year). */
export async function importedRounds(sql: Sql, tube: string): Promise<Set<number>> {
  const rows = await sql<{ value: number }[]>`
    select distinct measurement_value(m.value, m.value_thousandths)::int as value from measurements m join tubes t on t.id = m.tube_id
    where t.identifier = ${tube}::uuid and m.observed_at >= ${IMPORTS_FROM} and m.observed_at < ${IMPORTS_TO}`;
  return new Set(rows.map((row) => row.value));
}

/**
 * Each API replica's readiness, straight (not through HAProxy), in rounds every READY_POLL_MS: when
 * every replica passed in one round, and what the others last said.
 */
export function readinessWatch(bases: string[]) {
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
  const wholeSince = (after: number): number | undefined => {
    const first = rounds.findIndex((round) => round.startedAt >= after && round.allPass);
    if (first === -1 || !rounds.slice(first).every((round) => round.allPass)) return undefined;
    return rounds[first]!.startedAt;
  };
  return {
    /**
     * The start of the first round begun at or after `after` in which every replica passed, when every
     * round since passed too; undefined otherwise.
     */
    wholeSince,
    /**
     * Waits until every replica is whole for good, counting only rounds begun a readiness reuse after
     * `after` (an earlier answer may be one reused from before); the moment, or NaN with the replicas
     * not passing after `timeoutMs`.
     */
    async untilWhole(after: number, timeoutMs: number): Promise<{ wholeAt: number; notPassing: string[] }> {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const since = wholeSince(after + READINESS_REUSE_MS);
        if (since !== undefined) return { wholeAt: since, notPassing: [] };
        if (performance.now() > deadline) {
          const notPassing = bases.flatMap((base, i) =>
            passing[i] ? [] : [`${base}: ${lastNotPassing[i]}`],
          );
          return { wholeAt: Number.NaN, notPassing };
        }
        await sleep(READY_POLL_MS);
      }
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * Every API replica caches the key as valid, then `revoke` revokes it on the primary and the caches run
 * out: from then on only a database can say it is revoked, and through the drill it must keep saying so.
 */
export async function revokeWhileCached(bases: string[], fixture: ProbeFixture, revoke: () => Promise<void>) {
  for (const base of bases) {
    const answer = await discovery(base, fixture.revokedKey, 'revoked key', (status) =>
      status === 200 ? { outcome: 'ok' } : { outcome: 'failed', cause: `HTTP ${status}` },
    );
    if (answer.outcome !== 'ok') throw new Error(`the key to revoke was refused before: ${answer.cause}`);
  }
  await revoke();
  await sleep(loadSettings({}).KEY_CACHE_SECONDS * 1000 + CACHE_SLACK_MS);
}

/**
 * What the probes broke: a failure outside the window [from, to], or one the contract does not allow,
 * and no probe of a kind after the window.
 */
export function probeProblems(probes: Probe[], window: { from: number; to: number }): string[] {
  const problems: string[] = [];
  for (const probe of probes) {
    if (probe.outcome === 'ok') continue;
    const inWindow = probe.endedAt >= window.from && probe.startedAt <= window.to;
    if (!inWindow) problems.push(`outside the window, a ${probe.kind} request failed (${probe.cause})`);
    else if (!probe.expected)
      problems.push(`a ${probe.kind} request failed, not as allowed (${probe.cause})`);
  }
  for (const kind of ['fresh key', 'revoked key', 'import'] as const) {
    const after = probes.filter((p) => p.kind === kind && p.startedAt > window.to);
    if (after.length === 0) problems.push(`no ${kind} request after the window`);
  }
  return problems;
}

/** What the switch-over and crash drills start before their step, and read back after it. */
export interface ProbedLoadOptions
  extends Pick<DrillRunOptions, 'folder' | 'periodMs' | 'owner' | 'watch' | 'log'> {
  redisUrl: string;
  fixture: DrillFixture & ProbeFixture;
  /** API replicas behind HAProxy. */
  replicas: number;
  /** DATABASE_URL (every node, read-write) and DATABASE_READ_URL (the standbys) of the replicas. */
  databaseUrl: string;
  databaseReadUrl: string;
  /** Revokes the fixture's revoked key on the primary, once the standbys have it too. */
  revoke: () => Promise<void>;
}

/**
 * The API fleet and the primary's token reader, the key revoked while cached, then the steady load, the
 * probes, the readiness watch and the tokens, all running; `phase` runs the drill's phases, `stopLoad`
 * and `close` end it all, `phases` reads what each saw.
 */
export async function startProbedLoad(options: ProbedLoadOptions) {
  const { fixture } = options;
  const tokens = await primaryTokens(options);
  const fleet = await startApiFleet({
    replicas: options.replicas,
    databaseUrl: options.databaseUrl,
    databaseReadUrl: options.databaseReadUrl,
    redisUrl: options.redisUrl,
    folder: options.folder,
    // The revoked key is asked for every moment from one address: not what the failed-key limit is for.
    env: { FAILED_AUTH_LIMIT: '1000000' },
    owner: options.owner,
    watch: options.watch,
  });
  const base = fleet.haproxy.base;
  const bases = fleet.ports.map((port) => `http://127.0.0.1:${port}`);
  try {
    await revokeWhileCached(bases, fixture, options.revoke);
  } catch (error) {
    await fleet.stop();
    await tokens.close();
    throw error;
  }
  tokens.start();
  // Before the loads start, so that each of their requests falls in a phase.
  const { windows, phase } = phaseClock<object>(options.log ?? (() => {}));
  const readiness = readinessWatch(bases);
  const load = steadyLoad(drillTarget(base, fixture), fixture.loadKeys, options.periodMs);
  const fresh = freshKeyProbes(base, fixture.freshKeys, fixture.wells);
  const revoked = revokedKeyProbes(base, fixture.revokedKey);
  const imports = importProbes(options.databaseUrl, fixture.importTube);
  const probes = () => [...fresh.done, ...revoked.done, ...imports.probes];
  return {
    fleet,
    base,
    /** The primary's sync tokens, taken from now on (syncTokens.ts). */
    tokens,
    readiness,
    load,
    imports,
    probes,
    phase: (name: string, work: () => Promise<unknown>) =>
      phase(name, async () => {
        await work();
        return undefined;
      }),
    /** Stops the fleet and the token reader, after stopLoad. */
    async close() {
      await fleet.stop();
      await tokens.close();
    },
    /** Ends the load, the probes and the readiness watch; the fleet stays up. */
    stopLoad: () =>
      Promise.all([load.stop(), fresh.stop(), revoked.stop(), imports.stop(), readiness.stop()]),
    /** Each phase with its load's requests and the probes begun in it. */
    phases: () =>
      windows.map((window) => ({
        ...window,
        requests: load.between(window.from, window.to),
        probes: probes().filter((p) => p.startedAt >= window.from && p.startedAt < window.to),
      })),
  };
}

/** What the load broke: a phase without requests, or a failed series or discovery (read from the standbys). */
export function loadProblems(phases: (PhaseWindow & { requests: DrillRequest[] })[]): string[] {
  const problems: string[] = [];
  for (const { phase, requests } of phases) {
    if (requests.length === 0) problems.push(`${phase}: no request of the load ran`);
    for (const request of requests) {
      if (request.outcome !== 'ok')
        problems.push(`a ${request.kind} request was ${request.outcome} (${request.cause ?? ''})`);
    }
  }
  return problems;
}

/**
 * The restore drill: a PostgreSQL 15 primary archiving its WAL to a pgBackRest repository set up from
 * deploy/pgbackrest/ (testkit/backups.ts), a full backup, then imports and reads under the drills'
 * steady load while clients keep what they were served: sync tokens with their copies, and each probe
 * series' ETag and Last-Modified with its body. A restore target is read off the server's clock in the
 * middle of the imports, and a key is revoked after it. The primary is then lost, the backup restored to
 * the target into a fresh data directory (`pgbackrest restore --type=time --target-action=promote`: a
 * new timeline), and a new `gwapi serve` started against it. What must hold (`problems`; none is a PASS):
 *
 * - every import acknowledged before the target is in the restored database, none begun after it;
 * - a token issued before the target gives a delta that makes its copy exactly a full read; one issued
 *   after it gives 410, also once imports into the restored database have taken its transaction ids
 *   past the token's;
 * - no ETag (If-None-Match) or Last-Modified (If-Modified-Since) kept before the restore gets a 304 for a
 *   body other than the one kept with it;
 * - the key revoked after the target is served again, and refused once the steps of
 *   docs/operations/backups.md are done: a scratch standby of the old timeline from the same repository,
 *   `gwapi keys list --json` on both, `gwapi keys revoke` for what only the old timeline revoked;
 * - the load's reads never fail while a database serves them.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { connect, type Sql } from '../../src/db/connect.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { createKey, grantKey, revokeKey } from '../../src/keys/store.js';
import { seriesPath, WELLS_PATH } from '../apiPaths.js';
import type { BackupRepository } from '../backups.js';
import { addKey, addWell } from '../fixtures.js';
import { outcome, type Replica, spawnGwapi, spawnReplica } from '../gwapi.js';
import { rememberKey } from '../outputCapture.js';
import { POSTGRES_15_BIN } from '../prerequisites.js';
import { appendAuto, type Node, type ReplicationCluster } from '../replication.js';
import { type DrillFixture, drillTarget } from './drillFixture.js';
import { type DrillRequest, steadyLoad } from './drillLoad.js';
import { type DrillRunOptions, type PhaseWindow, phaseClock } from './phases.js';
import { every } from './timedLoops.js';

export interface RestoreFixture {
  /** Identifiers of the tubes every import writes to, whose series are kept and probed. */
  probeTubes: string[];
  /** May read the probe tubes: the client that keeps tokens and validators. */
  readerKey: string;
  /** Revoked after the restore target. */
  revokedKey: string;
  revokedKeyId: string;
  /** Granted the first probe tube after the restore target (none before). */
  grantedKey: string;
  grantedKeyId: string;
}

export interface RestoreOptions extends DrillRunOptions {
  cluster: ReplicationCluster;
  repository: BackupRepository;
  fixture: DrillFixture & RestoreFixture;
}

/** An import of one row per probe tube (or per tube of `tubes`), as `gwapi import measurements` does it. */
export interface ImportRound {
  round: number;
  startedAt: number;
  /** importMeasurements returned: the import was acknowledged. */
  ackedAt?: number;
  failure?: string;
}

interface KeptToken {
  issuedFrom: number;
  issuedTo: number;
  token: string;
  /** What the client holds: `tube observedAt` → value. */
  copy: Map<string, number>;
  /** The primary's next transaction id when the token was issued. */
  nextXid: bigint;
}

interface KeptValidators {
  keptFrom: number;
  keptTo: number;
  tube: string;
  etag: string;
  lastModified: string;
  body: string;
}

export interface TokenProbe {
  side: 'before' | 'after';
  status: number;
  /** For a 200: rows where the copy with the delta applied differs from a full read (missing, extra or another value). */
  wrongRows?: number;
  /** Of those, rows of the full read the copy lacks or holds with another value: what the client missed. */
  missedRows?: number;
}

export interface ValidatorProbe {
  side: 'before' | 'after';
  header: 'If-None-Match' | 'If-Modified-Since';
  status: number;
  /** A 304 while the body differs from the one kept with the validator. */
  wrong: boolean;
}

export interface RestoreReport {
  phases: (PhaseWindow & { requests: DrillRequest[] })[];
  target: string;
  imports: {
    ackedBefore: number;
    keptOfAckedBefore: number;
    begunAfter: number;
    keptOfBegunAfter: number;
    straddling: number;
    keptOfStraddling: number;
    /** Rounds with some of their rows only: an import is one transaction, so none may be. */
    partial: number;
  };
  /** Milliseconds from the restore command: restored, PostgreSQL accepts connections, promoted, serve listens, ready. */
  timings: { restored: number; started: number; promoted: number; listening: number; ready: number };
  timeline: number;
  /** The restored database's next transaction id passed the newest after-target token's. */
  xidsPassed: { restored: bigint; token: bigint };
  tokens: TokenProbe[];
  validators: ValidatorProbe[];
  /** The keys changed after the target, as the guide finds and applies them. */
  keys: {
    /** Status of each key's request after the restore, then after the guide's steps. */
    afterRestore: KeyAnswers;
    afterGuide: KeyAnswers;
    /** What the comparison of the old timeline's keys with the restored ones found: `key_…: revoked`. */
    changed: string[];
    /** Lines still differing after the guide's steps. */
    leftAfterGuide: number;
  };
  problems: string[];
}

/** The status of a request by each key changed after the target: the revoked and the created key ask for discovery, the granted one for the tube granted. */
export interface KeyAnswers {
  revoked: number;
  created: number;
  granted: number;
}
/** What each answers once the changes are applied again (and answered on the old timeline). */
const KEYS_AS_CHANGED: KeyAnswers = { revoked: 401, created: 200, granted: 200 };

const run = promisify(execFile);
const FROM = '2030-01-01T00:00:00Z';
const TO = '2031-01-01T00:00:00Z';
const IMPORT_PERIOD_MS = 250;
const KEEP_PERIOD_MS = 1000;
const READY_POLL_MS = 100;
const KEY_CACHE_SECONDS = 1;
const REFUSED_WITHIN_MS = KEY_CACHE_SECONDS * 1000 + 3000;

/** The probe tubes, a reader key for them, and a key to revoke after the target. */
export async function addRestoreFixture(sql: Sql, probes: number): Promise<RestoreFixture> {
  const tubes: { id: number; identifier: string }[] = [];
  for (let well = 1; tubes.length < probes; well++) {
    const numbers = Array.from({ length: Math.min(3, probes - tubes.length) }, (_, i) => ({
      number: String(i + 1),
    }));
    tubes.push(...(await addWell(sql, `Restore probe ${well}`, numbers)));
  }
  const tubeIds = tubes.map((tube) => tube.id);
  const reader = await addKey(sql, { tubeIds });
  const revoked = await addKey(sql, { tubeIds });
  const granted = await addKey(sql);
  return {
    probeTubes: tubes.map((tube) => tube.identifier),
    readerKey: reader.key,
    revokedKey: revoked.key,
    revokedKeyId: revoked.keyId,
    grantedKey: granted.key,
    grantedKeyId: granted.keyId,
  };
}

const minute = (round: number) => new Date(Date.parse(FROM) + round * 60_000).toISOString();

/** Imports rounds one after the other, every IMPORT_PERIOD_MS, until stopped. */
function importLoop(url: string, tubes: string[], first: number, valueOffset: number) {
  const sql = connect(url, { max: 1, applicationName: 'restore drill (imports)' });
  let round = first;
  const imports = every<ImportRound>(IMPORT_PERIOD_MS, async () => {
    const n = round++;
    const csv = tubes.map((tube, i) => `${tube},${minute(n)},${n + valueOffset + i / 1000}`).join('\n');
    const entry: ImportRound = { round: n, startedAt: performance.now() };
    try {
      await importMeasurements(sql, Readable.from(`tubeIdentifier,observedAt,value\n${csv}\n`), {
        name: `round ${n}`,
      });
      entry.ackedAt = performance.now();
    } catch (error) {
      entry.failure = (error as Error).message;
    }
    return entry;
  });
  return {
    rounds: imports.done,
    async stop() {
      await imports.stop();
      await sql.end({ timeout: 1 });
    },
  };
}

async function get(base: string, path: string, key: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    headers: { 'x-api-key': key, accept: 'application/json', ...headers },
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

const networkPath = (tubes: string[], since?: string) =>
  `/v1/groundwater-monitoring-measurements?from=${FROM}&to=${TO}&tubes=${tubes.join(',')}${
    since ? `&changedSince=${encodeURIComponent(since)}` : ''
  }`;

interface NetworkDocument {
  syncToken: string;
  series: { tubeIdentifier: string; measurements: { observedAt: string; value: number }[] }[];
}

/** The rows of a network document, `tube observedAt` → value. */
function rowsOf(document: NetworkDocument, into = new Map<string, number>()): Map<string, number> {
  for (const series of document.series) {
    for (const row of series.measurements) into.set(`${series.tubeIdentifier} ${row.observedAt}`, row.value);
  }
  return into;
}

async function fullRead(base: string, fixture: RestoreFixture): Promise<NetworkDocument> {
  const response = await get(base, networkPath(fixture.probeTubes), fixture.readerKey);
  if (response.status !== 200) throw new Error(`a full read of the probe tubes: HTTP ${response.status}`);
  return JSON.parse(response.body) as NetworkDocument;
}

async function nextXid(sql: Sql): Promise<bigint> {
  const [row] = await sql<{ xid: string }[]>`select pg_snapshot_xmax(pg_current_snapshot())::text as xid`;
  return BigInt(row!.xid);
}

/** Every KEEP_PERIOD_MS, a token with its copy and every probe series' validators with its body. */
function keeper(base: string, fixture: RestoreFixture, primary: Sql) {
  const tokens: KeptToken[] = [];
  const validators: KeptValidators[] = [];
  let running = true;
  let failure: string | undefined;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const xid = await nextXid(primary);
        const document = await fullRead(base, fixture);
        tokens.push({
          issuedFrom: started,
          issuedTo: performance.now(),
          token: document.syncToken,
          copy: rowsOf(document),
          nextXid: xid,
        });
        for (const tube of fixture.probeTubes) {
          const keptFrom = performance.now();
          const response = await get(base, seriesPath(tube, FROM, TO), fixture.readerKey);
          if (response.status !== 200) throw new Error(`series ${tube}: HTTP ${response.status}`);
          validators.push({
            keptFrom,
            keptTo: performance.now(),
            tube,
            etag: response.headers.get('etag') ?? '',
            lastModified: response.headers.get('last-modified') ?? '',
            body: response.body,
          });
        }
      } catch (error) {
        failure ??= (error as Error).message;
      }
      const wait = started + KEEP_PERIOD_MS - performance.now();
      if (wait > 0 && running) await sleep(wait);
    }
  })();
  return {
    tokens,
    validators,
    failure: () => failure,
    async stop() {
      running = false;
      await loop;
    },
  };
}

function replicaEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    KEY_CACHE_SECONDS: String(KEY_CACHE_SECONDS),
    // The drill's own client asks for every probe series every second: the limits are not under test.
    RATE_LIMIT_PER_SECOND: '1000',
    RATE_LIMIT_BURST: '100000',
    FAILED_AUTH_LIMIT: '1000000',
  };
}

async function untilReady(base: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${base}/health/ready`)
      .then((response) => response.status)
      .catch(() => 0);
    if (status === 200) return;
    if (performance.now() > deadline) throw new Error(`${base}/health/ready not 200 within ${timeoutMs} ms`);
    await sleep(READY_POLL_MS);
  }
}

/** `gwapi keys list --json` against `databaseUrl`, one line per key. */
async function keyLines(databaseUrl: string): Promise<string[]> {
  const listed = await outcome(
    spawnGwapi(['keys', 'list', '--json'], { env: { DATABASE_URL: databaseUrl } }),
  );
  if (listed.code !== 0) throw new Error(`gwapi keys list --json: ${listed.stderr}`);
  return listed.stdout.split('\n').filter(Boolean);
}

interface KeyLine {
  keyId: string;
  revokedAt: string | null;
  tubes: string[];
}

/** The lines of `gwapi keys list --json` on the old timeline that the restored database lacks, each seen `as`. */
async function keysDiffer(
  oldTimelineUrl: string,
  restoredUrl: string,
  as = (line: string) => line,
): Promise<string[]> {
  const [oldTimeline, restored] = await Promise.all([keyLines(oldTimelineUrl), keyLines(restoredUrl)]);
  const there = new Set(restored.map(as));
  return oldTimeline.filter((line) => !there.has(as(line)));
}

/**
 * The guide's steps (docs/operations/backups.md, "After a restore: key changes"), as an operator types
 * them: each differing line is a key created, revoked or granted after the target, applied again with
 * psql's \copy, `gwapi keys revoke` or `gwapi keys grant`. Returns what it found, `key_…: revoked`.
 */
async function applyKeyChanges(
  oldTimelineUrl: string,
  restoredUrl: string,
  folder: string,
  problems: string[],
): Promise<string[]> {
  const restored = new Map(
    (await keyLines(restoredUrl)).map((line) => {
      const record = JSON.parse(line) as KeyLine;
      return [record.keyId, record];
    }),
  );
  const found: string[] = [];
  const gwapi = async (args: string[]) => {
    const done = await outcome(spawnGwapi(args, { env: { DATABASE_URL: restoredUrl } }));
    if (done.code !== 0) problems.push(`gwapi ${args.join(' ')}: ${done.stderr.trim()}`);
  };
  const psql = (url: string, commands: string[]) =>
    run(
      join(POSTGRES_15_BIN, 'psql'),
      [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', ...commands.flatMap((c) => ['-c', c])],
      {
        cwd: folder,
      },
    );
  for (const line of await keysDiffer(oldTimelineUrl, restoredUrl)) {
    const record = JSON.parse(line) as KeyLine;
    const before = restored.get(record.keyId);
    if (!before) {
      found.push(`${record.keyId}: created`);
      await psql(oldTimelineUrl, [
        `\\copy (select * from api_keys where id = '${record.keyId}') to 'key.csv' csv`,
        `\\copy (select * from api_key_grants where key_id = '${record.keyId}') to 'grants.csv' csv`,
      ]);
      await psql(restoredUrl, [
        "\\copy api_keys from 'key.csv' csv",
        "\\copy api_key_grants from 'grants.csv' csv",
      ]);
    } else if (record.revokedAt && !before.revokedAt) {
      found.push(`${record.keyId}: revoked`);
      await gwapi(['keys', 'revoke', record.keyId]);
    } else {
      const more = record.tubes.filter((tube) => !before.tubes.includes(tube));
      found.push(`${record.keyId}: granted`);
      if (more.length > 0) await gwapi(['keys', 'grant', record.keyId, '--tube', ...more]);
    }
  }
  return found;
}

/** Discovery with `key` every 200 ms until `status` or `timeoutMs`: how many requests it took. */
async function untilStatus(base: string, key: string, status: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (let asked = 1; ; asked++) {
    if ((await get(base, WELLS_PATH, key)).status === status) return asked;
    if (performance.now() > deadline) return 0;
    await sleep(200);
  }
}

export async function runRestoreDrill(options: RestoreOptions): Promise<RestoreReport> {
  const { cluster, repository, fixture, log = () => {} } = options;
  const problems: string[] = [];
  const primary = cluster.primary;
  const adminSql = connect(primary.url, { max: 1, applicationName: 'restore drill' });
  let restored: Node | undefined;
  let scratch: Node | undefined;
  const replicas: Replica[] = [];
  try {
    const first = await spawnReplica(replicaEnv(primary.url), { owner: options.owner, watch: options.watch });
    replicas.push(first);
    const { windows, phase } = phaseClock<{ requests: DrillRequest[] }>(log);
    const load = steadyLoad(drillTarget(first.base, fixture), fixture.loadKeys, options.periodMs);
    const imports = importLoop(primary.url, fixture.probeTubes, 0, 0);
    const kept = keeper(first.base, fixture, adminSql);
    let created = { key: '', keyId: '' };
    let target = '';
    let targetFrom = 0;
    let targetTo = 0;
    await phase('before the target', async () => {
      const since = performance.now();
      await sleep(options.settleMs);
      return { requests: load.between(since, performance.now()) };
    });
    await phase('after the target', async () => {
      targetFrom = performance.now();
      const [row] = await adminSql<{ at: string }[]>`
        select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' as at`;
      target = row!.at;
      targetTo = performance.now();
      log(`restore target ${target}`);
      await sleep(options.settleMs / 2);
      await revokeKey(adminSql, fixture.revokedKeyId);
      created = await createKey(adminSql, {
        name: 'created after the target',
        tubeIdentifiers: fixture.probeTubes.slice(0, 1),
        allTubes: false,
      });
      rememberKey(created.key);
      await grantKey(adminSql, fixture.grantedKeyId, fixture.probeTubes.slice(0, 1));
      await sleep(options.settleMs / 2);
      return { requests: load.between(targetFrom, performance.now()) };
    });
    await kept.stop();
    await imports.stop();
    await load.stop();
    if (kept.failure()) problems.push(`keeping tokens and validators: ${kept.failure()}`);
    for (const round of imports.rounds.filter((r) => r.failure)) {
      problems.push(`import round ${round.round} failed before the restore: ${round.failure}`);
    }
    const refusedBefore = await untilStatus(first.base, fixture.revokedKey, 401, REFUSED_WITHIN_MS);
    if (refusedBefore === 0) problems.push('the revoked key was not refused before the restore');

    // Everything the old timeline wrote is in the archive, then the primary is lost.
    const lastLsn = (await adminSql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0]!.lsn;
    await repository.pgbackrest(['check']);
    await adminSql.end({ timeout: 1 });
    await first.stop();
    await primary.stop('fast');

    const timings = { restored: 0, started: 0, promoted: 0, listening: 0, ready: 0 };
    let second: Replica | undefined;
    let timeline = 0;
    await phase('restore, until ready', async () => {
      const start = performance.now();
      restored = await repository.restore('restored', [
        '--type=time',
        `--target=${target}`,
        '--target-action=promote',
      ]);
      timings.restored = performance.now() - start;
      await appendAuto(restored, { port: String(restored.port) });
      await restored.start();
      timings.started = performance.now() - start;
      for (;;) {
        const [row] = await restored.query(
          (sql) => sql<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`,
        );
        if (!row!.recovering) break;
        await sleep(50);
      }
      timings.promoted = performance.now() - start;
      second = await spawnReplica(replicaEnv(restored.url), { owner: options.owner, watch: options.watch });
      replicas.push(second);
      timings.listening = performance.now() - start;
      await untilReady(second.base);
      timings.ready = performance.now() - start;
      const [row] = await restored.query(
        (sql) => sql<{ timeline: number }[]>`select timeline_id as timeline from pg_control_checkpoint()`,
      );
      timeline = row!.timeline;
      return { requests: [] };
    });
    const serving = second!;
    const restoredDb = restored!;
    if (timeline < 2) problems.push(`the restore did not start a new timeline (timeline ${timeline})`);

    // RPO, by rows: which rounds the restored database holds.
    const present = new Map<number, number>();
    await restoredDb.query(async (sql) => {
      const rows = await sql<{ at: Date; rows: number }[]>`
        select m.observed_at as at, count(*)::int as rows from measurements m join tubes t on t.id = m.tube_id
        where t.identifier = any(${fixture.probeTubes}::uuid[]) group by m.observed_at`;
      for (const row of rows)
        present.set(Math.round((row.at.getTime() - Date.parse(FROM)) / 60_000), row.rows);
    });
    const all = fixture.probeTubes.length;
    const attempted = imports.rounds.filter((r) => !r.failure);
    const whole = (rounds: ImportRound[]) => rounds.filter((r) => present.get(r.round) === all).length;
    const ackedBefore = attempted.filter((r) => r.ackedAt! < targetFrom);
    const begunAfter = attempted.filter((r) => r.startedAt > targetTo);
    const straddling = attempted.filter((r) => !ackedBefore.includes(r) && !begunAfter.includes(r));
    const importsReport = {
      ackedBefore: ackedBefore.length,
      keptOfAckedBefore: whole(ackedBefore),
      begunAfter: begunAfter.length,
      keptOfBegunAfter: begunAfter.filter((r) => present.has(r.round)).length,
      straddling: straddling.length,
      keptOfStraddling: whole(straddling),
      partial: [...present.values()].filter((rows) => rows !== all).length,
    };
    if (importsReport.keptOfAckedBefore !== importsReport.ackedBefore) {
      problems.push(
        `${importsReport.ackedBefore - importsReport.keptOfAckedBefore} of ${importsReport.ackedBefore} imports acknowledged before the target are not in the restored database`,
      );
    }
    if (importsReport.keptOfBegunAfter > 0) {
      problems.push(
        `${importsReport.keptOfBegunAfter} imports begun after the target are in the restored database`,
      );
    }
    if (importsReport.partial > 0) problems.push(`${importsReport.partial} imports are there in part`);

    // After the restore: the load again, and imports that reuse the transaction ids of the lost ones,
    // into half the probe tubes (the other half keep their restored change times).
    const tokensAfter = kept.tokens.filter((token) => token.issuedFrom > targetTo);
    const newestAfter = tokensAfter.at(-1)?.nextXid ?? 0n;
    const loadAfter = steadyLoad(drillTarget(serving.base, fixture), fixture.loadKeys, options.periodMs);
    const lastRound = Math.max(...imports.rounds.map((r) => r.round));
    const half = fixture.probeTubes.filter((_, i) => i % 2 === 0);
    const roundsAfterTarget = begunAfter.length;
    let xidsPassed = { restored: 0n, token: newestAfter };
    await phase('after the restore', async () => {
      const since = performance.now();
      const again = importLoop(restoredDb.url, half, lastRound + 1, 0.5);
      const deadline = performance.now() + Math.max(options.settleMs, 60_000);
      for (;;) {
        await sleep(IMPORT_PERIOD_MS);
        const restoredXid = await restoredDb.query(nextXid);
        xidsPassed = { restored: restoredXid, token: newestAfter };
        const done =
          again.rounds.filter((r) => r.ackedAt).length >= roundsAfterTarget && restoredXid > newestAfter;
        if (done && performance.now() - since >= options.settleMs / 2) break;
        if (performance.now() > deadline) break;
      }
      await again.stop();
      for (const round of again.rounds.filter((r) => r.failure)) {
        problems.push(`import round ${round.round} into the restored database failed: ${round.failure}`);
      }
      return { requests: loadAfter.between(since, performance.now()) };
    });
    await loadAfter.stop();
    if (!(xidsPassed.restored > xidsPassed.token)) {
      problems.push(
        `the restored database's transaction ids (${xidsPassed.restored}) did not pass the newest token's (${xidsPassed.token})`,
      );
    }

    // Tokens: exact before the target; after it 410, or an exact delta when the token's snapshot held
    // nothing the restore undid (issued before any write after the target); never a 200 that is wrong.
    const now = rowsOf(await fullRead(serving.base, fixture));
    const tokens: TokenProbe[] = [];
    for (const token of kept.tokens) {
      const side = token.issuedTo < targetFrom ? 'before' : token.issuedFrom > targetTo ? 'after' : undefined;
      if (!side) continue;
      const response = await get(
        serving.base,
        networkPath(fixture.probeTubes, token.token),
        fixture.readerKey,
      );
      const probe: TokenProbe = { side, status: response.status };
      if (response.status === 200) {
        const copy = rowsOf(JSON.parse(response.body) as NetworkDocument, new Map(token.copy));
        const keys = new Set([...now.keys(), ...copy.keys()]);
        probe.wrongRows = [...keys].filter((key) => copy.get(key) !== now.get(key)).length;
        probe.missedRows = [...now.keys()].filter((key) => copy.get(key) !== now.get(key)).length;
      }
      tokens.push(probe);
    }
    const wrongTokens = (side: 'before' | 'after') =>
      tokens.filter(
        (p) =>
          p.side === side &&
          !((p.status === 200 && p.wrongRows === 0) || (side === 'after' && p.status === 410)),
      );
    if (wrongTokens('before').length > 0) {
      problems.push(
        `${wrongTokens('before').length} of ${tokens.filter((p) => p.side === 'before').length} tokens from before the target did not give an exact delta (${describeTokens(wrongTokens('before'))})`,
      );
    }
    if (wrongTokens('after').length > 0) {
      problems.push(
        `${wrongTokens('after').length} of ${tokens.filter((p) => p.side === 'after').length} tokens from after the target were neither 410 nor an exact delta (${describeTokens(wrongTokens('after'))})`,
      );
    }

    // Validators: a 304 only for the body kept with the validator.
    const current = new Map<string, string>();
    for (const tube of fixture.probeTubes) {
      current.set(tube, (await get(serving.base, seriesPath(tube, FROM, TO), fixture.readerKey)).body);
    }
    const validators: ValidatorProbe[] = [];
    for (const held of kept.validators) {
      const side = held.keptTo < targetFrom ? 'before' : 'after';
      const differs = current.get(held.tube) !== held.body;
      for (const [header, value] of [
        ['If-None-Match', held.etag],
        ['If-Modified-Since', held.lastModified],
      ] as const) {
        if (!value) continue;
        const response = await get(serving.base, seriesPath(held.tube, FROM, TO), fixture.readerKey, {
          [header]: value,
        });
        validators.push({ side, header, status: response.status, wrong: response.status === 304 && differs });
      }
    }
    for (const header of ['If-None-Match', 'If-Modified-Since'] as const) {
      const wrong = validators.filter((p) => p.header === header && p.wrong).length;
      if (wrong > 0) {
        problems.push(
          `${wrong} of ${validators.filter((p) => p.header === header).length} ${header} probes got a 304 for a body other than the one kept`,
        );
      }
    }

    // The keys changed after the target: as they were at the target, then the guide's steps.
    const firstSeries = seriesPath(fixture.probeTubes[0]!, FROM, TO);
    const keyAnswers = async (): Promise<KeyAnswers> => ({
      revoked: (await get(serving.base, WELLS_PATH, fixture.revokedKey)).status,
      created: (await get(serving.base, WELLS_PATH, created.key)).status,
      granted: (await get(serving.base, firstSeries, fixture.grantedKey)).status,
    });
    const afterRestore = await keyAnswers();
    if (afterRestore.revoked !== 200 || afterRestore.created !== 401 || afterRestore.granted === 200) {
      problems.push(
        `after the restore the keys did not answer as at the target: ${JSON.stringify(afterRestore)}`,
      );
    }
    scratch = await repository.restore('scratch', [
      '--type=standby',
      '--target-timeline=1',
      '--archive-mode=off',
    ]);
    await appendAuto(scratch, { port: String(scratch.port) });
    await scratch.start();
    const scratchDb = scratch;
    const replayDeadline = performance.now() + 60_000;
    for (;;) {
      const [row] = await scratchDb.query(
        (sql) => sql<{ done: boolean }[]>`select pg_last_wal_replay_lsn() >= ${lastLsn}::pg_lsn as done`,
      );
      if (row?.done) break;
      if (performance.now() > replayDeadline)
        throw new Error(`the scratch standby did not replay up to ${lastLsn}`);
      await sleep(100);
    }
    const changed = await applyKeyChanges(scratchDb.url, restoredDb.url, repository.folder, problems);
    // A revocation applied again carries the time it was applied: only whether a key is revoked compares.
    const revokedOrNot = (line: string) => {
      const { revokedAt, ...rest } = JSON.parse(line) as KeyLine;
      return JSON.stringify({ ...rest, revoked: revokedAt !== null });
    };
    const left = await keysDiffer(scratchDb.url, restoredDb.url, revokedOrNot);
    const deadline = performance.now() + REFUSED_WITHIN_MS;
    let afterGuide = await keyAnswers();
    while (JSON.stringify(afterGuide) !== JSON.stringify(KEYS_AS_CHANGED) && performance.now() < deadline) {
      await sleep(200);
      afterGuide = await keyAnswers();
    }
    if (JSON.stringify(afterGuide) !== JSON.stringify(KEYS_AS_CHANGED)) {
      problems.push(
        `after the guide's steps the keys answer ${JSON.stringify(afterGuide)}, not ${JSON.stringify(KEYS_AS_CHANGED)}`,
      );
    }
    if (left.length > 0) problems.push(`after the guide's steps ${left.length} key lines still differ`);

    const phases = windows.map((w) => ({ ...w, requests: w.requests ?? [] }));
    for (const { phase: name, requests } of phases) {
      const failed = requests.filter((r) => r.outcome === 'failed' && r.retry !== 'ok');
      if (failed.length > 0)
        problems.push(`${name}: ${failed.length} reads of the load failed (${failed[0]!.cause})`);
    }
    return {
      phases,
      target,
      imports: importsReport,
      timings,
      timeline,
      xidsPassed,
      tokens,
      validators,
      keys: { afterRestore, afterGuide, changed, leftAfterGuide: left.length },
      problems,
    };
  } finally {
    await adminSql.end({ timeout: 1 }).catch(() => undefined);
    await Promise.all(replicas.map((replica) => replica.stop().catch(() => undefined)));
    await restored?.close();
    await scratch?.close();
  }
}

function describeTokens(probes: TokenProbe[]): string {
  const counts = new Map<string, number>();
  for (const probe of probes) {
    const what =
      probe.status === 200
        ? `200 with ${probe.wrongRows} rows wrong, ${probe.missedRows} of them missed`
        : `HTTP ${probe.status}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts].map(([what, n]) => `${n}× ${what}`).join(', ');
}

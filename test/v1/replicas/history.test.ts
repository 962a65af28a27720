/**
 * Tokens and validators across timelines, with real PostgreSQL 15 servers (testkit/replication.ts) and
 * one `gwapi serve` that follows whichever is the primary:
 * - a planned switch-over (the primary stopped, a standby promoted at the end of its WAL): every token
 *   stays valid and its delta exact;
 * - a history that went back, as after a restore to a point in time or a failover to a standby that
 *   lacked the last commits: the standby is stopped, the primary writes on (a future that will be lost)
 *   and hands out tokens and validators, then crashes, and the stopped standby is promoted. The new
 *   primary hands out the lost transactions' ids again and counts the series versions up again from
 *   before the loss, for other rows. A token from the lost future gives 410, never a 200 that misses
 *   rows; an ETag or Last-Modified from it never gives a 304; a token from before the branch point
 *   still gives an exact delta.
 * Each check of the lost future first shows that the database alone cannot tell: the same xids seen,
 * the same series version, an older change time. A service that trusted them would answer wrongly.
 */
import t from 'tap';
import { connect } from '../../../src/db/connect.js';
import { lsnOf } from '../../../src/db/walHistory.js';
import { loadSyncSecret } from '../../../src/sync/sql.js';
import { readSyncToken } from '../../../src/sync/token.js';
import { type PgNode, replicationMissing } from '../../../testkit/replication.js';
import { seriesPath } from '../../helpers/conditional.js';
import { get, type HttpResponse } from '../../helpers/http.js';
import { OTHER, rowImporter, TUBE } from '../../helpers/importFixtures.js';
import { networkPath } from '../../helpers/network.js';
import { replicatedData } from '../../helpers/replicas.js';
import { startReplica } from '../../helpers/serve.js';
import { until } from '../../helpers/until.js';

const JANUARY = { from: '2024-01-01T00:00:00Z', to: '2024-02-01T00:00:00Z' };
const NETWORK = networkPath(JANUARY);
const WELLS = '/v1/groundwater-monitoring-wells';

/** An hour of minutes of `tube` on `day` of January 2024, valued `value`. */
const hourOf = (tube: string, day: number, value: number): [string, string, string][] =>
  Array.from({ length: 60 }, (_, minute) => [
    tube,
    `2024-01-${String(day).padStart(2, '0')}T10:${String(minute).padStart(2, '0')}:00Z`,
    String(value),
  ]);

interface Network {
  syncToken: string;
  series: { tubeIdentifier: string; measurements: { observedAt: string; value: number }[] }[];
}

/** Measurements per tube of a network body, as `tube day value` lines, sorted. */
const linesOf = (body: Network) =>
  body.series
    .flatMap(({ tubeIdentifier, measurements }) =>
      measurements.map((m) => `${tubeIdentifier} ${m.observedAt.slice(8, 10)} ${m.value}`),
    )
    .sort();
const expectedLines = (rows: [string, string, string][]) =>
  rows.map(([tube, at, value]) => `${tube} ${at.slice(8, 10)} ${value}`).sort();

t.test(
  'tokens and validators across a switch-over and a history that went back',
  {
    skip: replicationMissing(),
  },
  async (t) => {
    const { cluster, standbys, key, keyId } = await replicatedData(t, [
      ...hourOf(TUBE, 2, 1),
      ...hourOf(OTHER, 2, 1),
    ]);
    const [successor, survivor] = standbys;
    const server = await startReplica(t, {
      DATABASE_URL: cluster.url(cluster.nodes, { target_session_attrs: 'read-write' }),
      KEY_CACHE_SECONDS: '0',
      LIMITS_ENABLED: 'false',
    });
    const ask = (path: string, headers: Record<string, string> = {}) =>
      get(server.base, path, { 'x-api-key': key, ...headers });
    /** The answer once the service has found the primary again (connections to a stopped one fail first). */
    const settled = async (path: string, headers: Record<string, string> = {}) =>
      (await until(
        `${path} answered`,
        () => ask(path, headers).catch(() => undefined),
        (answer) => answer !== undefined && answer.status !== 503 && answer.status !== 500,
        30_000,
      ))!;
    const network = (answer: HttpResponse): Network => {
      t.equal(answer.status, 200, answer.body);
      return JSON.parse(answer.body) as Network;
    };
    const importerOn = (node: PgNode) => {
      const sql = connect(node.url, { max: 1 });
      t.teardown(() => sql.end({ timeout: 1 }));
      return { sql, importRows: rowImporter(sql) };
    };

    // A planned switch-over: the primary stopped cleanly, so the standby has all of its WAL.
    const before = network(await ask(NETWORK));
    await cluster.primary.stop('fast');
    await successor.promote();
    await survivor.follow(successor);
    const onSuccessor = importerOn(successor);
    const afterSwitch = hourOf(TUBE, 5, 5);
    await onSuccessor.importRows(afterSwitch);
    const sinceBefore = network(await settled(`${NETWORK}&changedSince=${before.syncToken}`));
    t.same(
      linesOf(sinceBefore),
      expectedLines(afterSwitch),
      'a token from before the switch-over: exact delta',
    );

    // The branch point: what the survivor holds when it stops. Then a future it will never see.
    // A token's place is the WAL position when it was read, which may lie past the last commit it saw
    // (WAL that is no transaction's, hint bits say): the survivor replays up to it, so that it is kept.
    const secret = await loadSyncSecret(onSuccessor.sql);
    const kept = network(await ask(NETWORK));
    const keptPlace = readSyncToken(kept.syncToken, keyId, secret)!.place!;
    await until(
      'the survivor replays up to the kept token',
      () => survivor.query((sql) => sql<{ lsn: string }[]>`select pg_last_wal_replay_lsn()::text as lsn`),
      ([row]) => lsnOf(row!.lsn) >= keptPlace.lsn,
    );
    await survivor.stop('fast');
    const lostRows = [...hourOf(TUBE, 6, 6), ...hourOf(OTHER, 6, 6)];
    await onSuccessor.importRows(lostRows);
    const lost = network(await ask(NETWORK));
    t.same(linesOf(lost).length, 60 * 5, 'the lost future was served');
    const lostSeries = await ask(seriesPath(TUBE));
    const lostOther = await ask(seriesPath(OTHER));
    const lostWells = await ask(WELLS);
    const versionOf = async (sql: typeof onSuccessor.sql, tube: string) => {
      const [row] = await sql<{ version: string }[]>`
      select series_version::text as version from tubes where identifier = ${tube}::uuid`;
      return row!.version;
    };
    const lostVersion = await versionOf(onSuccessor.sql, TUBE);
    const lostXmax = readSyncToken(lost.syncToken, keyId, secret)!.xmax;

    // The primary crashes; the survivor, which lacks the lost future, is promoted on a new timeline.
    await successor.stop('immediate');
    await survivor.start();
    await survivor.promote();
    const onSurvivor = importerOn(survivor);
    const rewritten = hourOf(TUBE, 7, 7);
    await onSurvivor.importRows(rewritten);
    t.equal(
      await versionOf(onSurvivor.sql, TUBE),
      lostVersion,
      'the series version counted up to the lost one',
    );

    const ifNoneMatch = await settled(seriesPath(TUBE), { 'if-none-match': lostSeries.headers.etag! });
    t.equal(ifNoneMatch.status, 200, 'an ETag of the lost future: 200, the same version notwithstanding');
    t.equal(JSON.parse(ifNoneMatch.body).measurements.length, 60 * 3, 'days 2, 5 and 7');

    const [changed] = await onSurvivor.sql<{ at: Date }[]>`
    select series_changed_at as at from tubes where identifier = ${OTHER}::uuid`;
    t.ok(
      changed!.at.getTime() < Date.parse(lostOther.headers['last-modified']!),
      'the other series changed, as restored, before the lost future’s date',
    );
    const ifModifiedSince = await ask(seriesPath(OTHER), {
      'if-modified-since': lostOther.headers['last-modified']!,
    });
    t.equal(ifModifiedSince.status, 200, 'a Last-Modified of the lost future: 200');
    t.equal(JSON.parse(ifModifiedSince.body).measurements.length, 60, 'day 2 only');
    const wells = await ask(WELLS, { 'if-modified-since': lostWells.headers['last-modified']! });
    t.equal(wells.status, 200, 'discovery: no date from another history is taken');

    // New writes until the restored database has handed out every xid the lost token saw.
    for (let day = 8; ; day++) {
      await onSurvivor.importRows(hourOf(OTHER, day, day));
      const [row] = await onSurvivor.sql<{ xmin: string }[]>`
      select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`;
      if (BigInt(row!.xmin) > lostXmax) break;
    }
    const sinceLost = await ask(`${NETWORK}&changedSince=${lost.syncToken}`);
    t.equal(sinceLost.status, 410, 'a token of the lost future: gone, though every xid it saw is past');
    t.match(JSON.parse(sinceLost.body), { status: 410 });

    const sinceKept = network(await ask(`${NETWORK}&changedSince=${kept.syncToken}`));
    const whole = network(await ask(NETWORK));
    const keptLines = new Set(linesOf(kept));
    t.same(
      linesOf(sinceKept),
      linesOf(whole).filter((line) => !keptLines.has(line)),
      'a token from the branch point: exactly what was written since, on the new history',
    );
    const sinceFirst = network(await ask(`${NETWORK}&changedSince=${before.syncToken}`));
    t.ok(sinceFirst.series.length > 0, 'a token from the first timeline: still valid two promotions on');
  },
);

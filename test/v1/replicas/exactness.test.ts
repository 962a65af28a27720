/**
 * Exact across read replicas (issue 24, item 2), with real streaming replicas of PostgreSQL 15
 * (testkit/replication.ts): one standby is held behind with pg_wal_replay_pause(), the other keeps up.
 * Validators and sync tokens taken from the primary are then brought to servers that read from the
 * standby held behind:
 * - a 304 only for what the answering replica holds: If-None-Match names a tag it does not have (200
 *   with its own), and If-Modified-Since a date past what it has replayed (200, where comparing dates
 *   alone would say 304);
 * - a sync token it has not replayed is answered by the other standby, or the primary (READ_FALLBACK),
 *   or 503 with Retry-After, never by the 410 of a token ahead of the database, never with a delta from
 *   its older snapshot; it waits briefly for a replica that catches up meanwhile. A token ahead of the
 *   primary itself is still its 410.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { connect } from '../../../src/db/connect.js';
import { BEHIND_WAIT_MS } from '../../../src/db/readReplicas/readSources.js';
import { parseInstant } from '../../../src/domain/datetime.js';
import { removeMeasurements, setStatus } from '../../../src/importers/measurements/corrections.js';
import { loadSyncSecret } from '../../../src/sync/sql.js';
import { issueSyncToken, readSyncToken } from '../../../src/sync/token.js';
import { replicationMissing } from '../../../testkit/replication.js';
import { seriesPath } from '../../helpers/conditional.js';
import { get, type HttpResponse } from '../../helpers/http.js';
import { heldImport, OTHER, TUBE } from '../../helpers/importFixtures.js';
import { networkPath } from '../../helpers/network.js';
import { replicatedData } from '../../helpers/replicas.js';
import { startReplica } from '../../helpers/serve.js';
import { until } from '../../helpers/until.js';

const JANUARY = { from: '2024-01-01T00:00:00Z', to: '2024-02-01T00:00:00Z' };
const NETWORK = networkPath(JANUARY);

/** An hour of minutes of `tube` on `day` of January 2024, valued `value`. */
const hourOf = (tube: string, day: number, value: number): [string, string, string][] =>
  Array.from({ length: 60 }, (_, minute) => [
    tube,
    `2024-01-${String(day).padStart(2, '0')}T10:${String(minute).padStart(2, '0')}:00Z`,
    String(value),
  ]);

/** Rows as CSV lines (no header), as heldImport takes them. */
const csvLines = (rows: [string, string, string][]) => rows.map((row) => row.join(','));

interface Network {
  syncToken: string;
  series: { tubeIdentifier: string; measurements: unknown[] }[];
}

t.test(
  'validators and sync tokens stay exact across replicas with different lag',
  {
    skip: replicationMissing(),
  },
  async (t) => {
    const { cluster, standbys, key, keyId, importRows } = await replicatedData(t, [
      ...hourOf(TUBE, 2, 1),
      ...hourOf(OTHER, 2, 1),
    ]);
    const [behind, current] = standbys;

    const common = { DATABASE_URL: cluster.primary.url, KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' };
    // Lag alone must not keep the held standby from reads here: what it answers is the point.
    const replicas = { ...common, READ_MAX_LAG_SECONDS: '3600' };
    const [primary, onBehind, behindFirst, behindOrPrimary] = await Promise.all([
      startReplica(t, common),
      startReplica(t, {
        ...replicas,
        DATABASE_READ_URL: cluster.url([behind]),
        READ_FALLBACK: 'unavailable',
      }),
      startReplica(t, {
        ...replicas,
        DATABASE_READ_URL: cluster.url([behind, current], { load_balance_hosts: 'disable' }),
        READ_FALLBACK: 'unavailable',
      }),
      startReplica(t, { ...replicas, DATABASE_READ_URL: cluster.url([behind]), READ_FALLBACK: 'primary' }),
    ]);
    const ask = (server: { base: string }, path: string, headers: Record<string, string> = {}) =>
      get(server.base, path, { 'x-api-key': key, ...headers });
    const network = (response: HttpResponse): Network => {
      t.equal(response.status, 200, response.body);
      return JSON.parse(response.body) as Network;
    };
    /** The measurements of a delta, without the token each source makes of its own snapshot. */
    const changes = (response: HttpResponse) => network(response).series;

    // Everything until now: a token every standby has replayed.
    const before = network(await ask(primary, NETWORK));
    await behind.pauseReplay();
    await importRows(hourOf(TUBE, 3, 2));
    await cluster.caughtUp(current);
    const series = await ask(primary, seriesPath(TUBE));
    const mid = network(await ask(primary, NETWORK));
    await importRows(hourOf(OTHER, 4, 3));
    await cluster.caughtUp(current);
    const sinceMid = `${NETWORK}&changedSince=${mid.syncToken}`;
    const expected = changes(await ask(primary, sinceMid));
    t.equal(expected.length, 1, 'the primary: one tube changed since the token');

    t.test('If-None-Match with the primary’s tag: 200 with the held replica’s own tag', async (t) => {
      const answer = await ask(onBehind, seriesPath(TUBE), { 'if-none-match': series.headers.etag! });
      t.equal(answer.status, 200);
      t.not(answer.headers.etag, series.headers.etag, 'the tag of what it holds');
      t.equal(JSON.parse(answer.body).measurements.length, 60, 'the day it has, not the one it lacks');
    });

    t.test('If-Modified-Since with the primary’s date: 200, not 304', async (t) => {
      const since = { 'if-modified-since': series.headers['last-modified']! };
      const answer = await ask(onBehind, seriesPath(TUBE), since);
      t.equal(answer.status, 200, 'its copy is older than the date: nothing says the client has it');
      t.ok(
        Date.parse(answer.headers['last-modified']!) < Date.parse(series.headers['last-modified']!),
        'its own, earlier date',
      );
      const networkAnswer = await ask(onBehind, NETWORK, since);
      t.equal(networkAnswer.status, 200, 'the network endpoint too');
      t.equal((await ask(onBehind, '/v1/groundwater-monitoring-wells', since)).status, 200, 'and discovery');
    });

    const LATEST = '/v1/groundwater-monitoring-measurements/latest';
    const latestOf = (response: HttpResponse) => {
      t.equal(response.status, 200, response.body);
      return JSON.parse(response.body) as { tubeIdentifier: string; observedAt: string }[];
    };
    const heldLatest = await ask(onBehind, LATEST);

    t.test('latest on the held standby: what it holds, kept as long as it holds no more', async (t) => {
      const ofTube = latestOf(heldLatest).find((row) => row.tubeIdentifier === TUBE);
      t.equal(ofTube?.observedAt, '2024-01-02T10:59:00Z', 'the day it has, not the one it lacks');
      t.equal((await ask(onBehind, LATEST)).body, heldLatest.body, 'asked again: the same document');
      t.not((await ask(primary, LATEST)).body, heldLatest.body, "the primary's holds the later imports");
    });

    t.test('a token the held replica has replayed: answered there', async (t) => {
      const delta = changes(await ask(onBehind, `${NETWORK}&changedSince=${before.syncToken}`));
      t.same(delta, [], 'nothing it holds is newer than the token');
    });

    t.test('a token it has not replayed: the other standby answers, the same delta', async (t) => {
      t.same(changes(await ask(behindFirst, sinceMid)), expected);
    });

    t.test('only the held replica and READ_FALLBACK=primary: the primary answers', async (t) => {
      t.same(changes(await ask(behindOrPrimary, sinceMid)), expected);
    });

    t.test('only the held replica and READ_FALLBACK=unavailable: 503 with Retry-After', async (t) => {
      const started = performance.now();
      const answer = await ask(onBehind, sinceMid);
      t.equal(answer.status, 503, answer.body);
      t.ok(Number(answer.headers['retry-after']) >= 1, `Retry-After: ${answer.headers['retry-after']}`);
      t.ok(performance.now() - started >= BEHIND_WAIT_MS, 'after waiting for it to catch up');
    });

    t.test('a token ahead of the primary itself: 410, not a 503 no wait would end', async (t) => {
      // As if from a restored backup's lost future: the database's secret, ahead of every xid it has.
      const secret = await cluster.primary.query((sql) => loadSyncSecret(sql));
      const { view, place } = readSyncToken(mid.syncToken, keyId, secret)!;
      const ahead = issueSyncToken({ xmin: 1n << 40n, xmax: 1n << 40n, xip: [], view, place }, keyId, secret);
      for (const server of [onBehind, behindFirst, behindOrPrimary]) {
        const answer = await ask(server, `${NETWORK}&changedSince=${ahead}`);
        t.equal(answer.status, 410, answer.body);
      }
    });

    t.test('a replica that catches up within the wait answers', async (t) => {
      const asked = ask(onBehind, sinceMid);
      await sleep(BEHIND_WAIT_MS / 4);
      await behind.resumeReplay();
      t.same(changes(await asked), expected);
    });

    t.test('once caught up, the held replica answers If-Modified-Since with 304', async (t) => {
      await cluster.caughtUp(behind);
      const since = { 'if-modified-since': series.headers['last-modified']! };
      const answer = await until(
        'the replica holds everything up to the date',
        () => ask(onBehind, seriesPath(TUBE), since),
        (response) => response.status !== 200,
      );
      t.equal(answer.status, 304);
      t.equal(answer.headers.etag, series.headers.etag);
    });

    t.test('once caught up, the held standby serves the latest the primary does', async (t) => {
      const fromPrimary = await ask(primary, LATEST);
      const caughtUp = await ask(onBehind, LATEST);
      t.not(caughtUp.body, heldLatest.body, 'not the document kept before it replayed');
      t.same(latestOf(caughtUp), latestOf(fromPrimary));
    });

    t.test('a token read on a standby while an import runs: the import’s changes come later', async (t) => {
      const importer = connect(cluster.primary.url, { max: 1 });
      t.teardown(() => importer.end());
      // An import holds its transaction open; a later, shorter one commits; both standbys replay that.
      const held = heldImport(importer, csvLines(hourOf(TUBE, 5, 7)));
      await held.holding;
      await importRows(hourOf(OTHER, 6, 8));
      await cluster.caughtUp();
      const snapshot = await behind.query(async (sql) => {
        const [row] = await sql<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`;
        return row!.snapshot;
      });
      t.match(snapshot, /:$/, `the premise: a standby's snapshot lists no running xid (${snapshot})`);
      const copy = network(await ask(onBehind, NETWORK));
      held.release();
      await held.done;
      await cluster.caughtUp();
      for (const server of [primary, onBehind]) {
        const delta = changes(await ask(server, `${NETWORK}&changedSince=${copy.syncToken}`));
        const imported = delta.find((element) => element.tubeIdentifier === TUBE);
        t.equal(imported?.measurements.length ?? 0, 60, 'the held import’s rows, none missed');
      }
    });

    t.test('a removal and a status change reach a delta read on a standby', async (t) => {
      const operator = connect(cluster.primary.url, { max: 1 });
      t.teardown(() => operator.end());
      await cluster.caughtUp();
      const copy = network(await ask(onBehind, `${NETWORK}&include=status`));
      const day2 = { from: parseInstant('2024-01-02T00:00:00Z'), to: parseInstant('2024-01-03T00:00:00Z') };
      t.equal(await removeMeasurements(operator, TUBE, day2), 60);
      t.equal(await setStatus(operator, [OTHER], day2, 'approved'), 60);
      await cluster.caughtUp();
      for (const server of [primary, onBehind]) {
        const delta = changes(
          await ask(server, `${NETWORK}&include=status&changedSince=${copy.syncToken}`),
        ) as { tubeIdentifier: string; measurements: { status: string }[] }[];
        const found = delta.map((element) =>
          [
            element.tubeIdentifier,
            element.measurements.length,
            ...new Set(element.measurements.map((m) => m.status)),
          ].join(' '),
        );
        t.same(
          found.sort(),
          [`${TUBE} 60 removed`, `${OTHER} 60 approved`].sort(),
          'the removals and the approvals',
        );
      }
    });
  },
);

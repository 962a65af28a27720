/**
 * Several read replicas (issue 24, item 1) with a real `gwapi serve` and real streaming replicas of
 * PostgreSQL 15 (testkit/replication.ts): reads spread over the usable standbys; one whose replay is
 * held behind past READ_MAX_LAG_SECONDS, or that stops, gets no new reads within seconds and gets them
 * again once back; with none usable, READ_FALLBACK decides between the primary and 503. Readiness and
 * the metrics show each replica's state and lag throughout.
 */
import t from 'tap';
import { startFaultReplica } from '../../../testkit/faults.js';
import { type PgNode, replicationMissing } from '../../../testkit/replication.js';
import { seriesPath } from '../../helpers/conditional.js';
import { get } from '../../helpers/http.js';
import { TUBE } from '../../helpers/importFixtures.js';
import { replicatedData } from '../../helpers/replicas.js';
import { until } from '../../helpers/until.js';

const MAX_LAG_SECONDS = 2;
/** How soon a replica that lags or stops must be skipped: the monitor asks each second. */
const SKIPPED_WITHIN_MS = 5000;

interface Readiness {
  status: string;
  checks: {
    replicas: { status: string; output?: string; replicas: { state: string; lagSeconds?: number }[] };
  };
}

t.test(
  'reads over several replicas, skipping those that lag or stop',
  {
    skip: replicationMissing(),
  },
  async (t) => {
    let imported = 0;
    /** A new value for a minute of TUBE: a write the standbys must replay. */
    const minute = (): [string, string, string][] => [
      [TUBE, `2024-01-02T00:${String(imported++ % 60).padStart(2, '0')}:00Z`, String(imported)],
    ];
    const { cluster, standbys, key, importRows } = await replicatedData(t, minute());
    const [one, two] = standbys;
    const write = () => importRows(minute());

    const settings = {
      DATABASE_READ_URL: cluster.url([one, two]),
      READ_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS),
      KEY_CACHE_SECONDS: '0',
    };
    const api = await startFaultReplica(t, cluster.primary.url, {
      ...settings,
      READ_FALLBACK: 'unavailable',
    });
    const name = (node: PgNode) => `127.0.0.1:${node.port}`;
    const served = (source: string) =>
      api.metric(`gwapi_reads_total{source="${source}"}`).then((n) => n ?? 0);
    const readiness = async (server = api) => {
      const response = await get(server.base, '/health/ready');
      return { code: response.status, report: JSON.parse(response.body) as Readiness };
    };
    const states = async (server = api) =>
      (await readiness(server)).report.checks.replicas.replicas.map((r) => r.state);
    /** `count` series requests; the statuses that came back. */
    const readSeries = async (count: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < count; i++) {
        statuses.push((await get(api.base, seriesPath(TUBE), { 'x-api-key': key })).status);
      }
      return statuses;
    };
    /** Reads served by each source during `work`. */
    const spread = async (work: () => Promise<unknown>) => {
      const sources = [name(one), name(two), 'primary'];
      const before = await Promise.all(sources.map(served));
      await work();
      const after = await Promise.all(sources.map(served));
      return Object.fromEntries(sources.map((source, i) => [source, after[i]! - before[i]!]));
    };
    /** Milliseconds until readiness shows the replicas in `expected` states. */
    const untilStates = async (expected: string[], what: string, server = api) => {
      const started = performance.now();
      await until(
        what,
        () => states(server),
        (now) => now.join() === expected.join(),
        20_000,
      );
      return performance.now() - started;
    };

    t.test('both usable: reads spread over both, none on the primary', async (t) => {
      const { code, report } = await readiness();
      t.equal(code, 200);
      t.same(report.checks.replicas, {
        status: 'pass',
        replicas: [
          { replica: 1, state: 'usable', lagSeconds: 0 },
          { replica: 2, state: 'usable', lagSeconds: 0 },
        ],
      });
      const reads = await spread(() => readSeries(40));
      t.ok(reads[name(one)]! >= 5 && reads[name(two)]! >= 5, `spread: ${JSON.stringify(reads)}`);
      t.equal(reads.primary, 0);
      t.equal(await api.metric(`gwapi_read_replica_state{replica="${name(one)}",state="usable"}`), 1);
    });

    t.test('a replica held behind past READ_MAX_LAG_SECONDS: no new reads until it catches up', async (t) => {
      await one.pauseReplay();
      await write();
      const ms = await untilStates(['lagging', 'usable'], 'replica 1 lags');
      t.ok(ms < SKIPPED_WITHIN_MS + MAX_LAG_SECONDS * 1000, `skipped after ${Math.round(ms)} ms`);
      const { code, report } = await readiness();
      t.equal(code, 200, 'ready: the other replica serves');
      t.equal(report.checks.replicas.status, 'warn');
      t.match(report.checks.replicas.output, /^1 of 2 usable; replica 1 lagging/);
      t.ok(report.checks.replicas.replicas[0]!.lagSeconds! >= MAX_LAG_SECONDS, 'its lag, to a tenth');
      const lag = await api.metric(`gwapi_read_replica_lag_seconds{replica="${name(one)}"}`);
      t.ok(lag! > MAX_LAG_SECONDS, `lag metric ${lag}`);
      t.equal(await api.metric(`gwapi_read_replica_state{replica="${name(one)}",state="lagging"}`), 1);
      const reads = await spread(() => readSeries(20));
      t.same(reads, { [name(one)]: 0, [name(two)]: 20, primary: 0 }, 'all on the one that keeps up');
      await one.resumeReplay();
      await untilStates(['usable', 'usable'], 'replica 1 caught up');
      const again = await spread(() => readSeries(40));
      t.ok(again[name(one)]! > 0, `used again: ${JSON.stringify(again)}`);
    });

    t.test(
      'a replica that stops: skipped within seconds, no request fails, used again when back',
      async (t) => {
        const stopped = performance.now();
        const statuses: number[] = [];
        let reading = true;
        // Requests all along: those that meet the closed connections go to the other replica.
        const load = (async () => {
          while (reading) statuses.push(...(await readSeries(1)));
        })();
        await two.stop('fast');
        await until(
          'replica 2 down',
          () => states(),
          (now) => now[1] === 'down',
          20_000,
        );
        const ms = performance.now() - stopped;
        t.ok(ms < SKIPPED_WITHIN_MS, `skipped after ${Math.round(ms)} ms`);
        // The load goes on meanwhile: its reads count too.
        const reads = await spread(() => readSeries(10));
        t.ok(reads[name(one)]! >= 10, `on the other: ${JSON.stringify(reads)}`);
        t.equal(reads[name(two)]! + reads.primary!, 0, 'none on the stopped one, none on the primary');
        await two.start();
        await untilStates(['usable', 'usable'], 'replica 2 back');
        reading = false;
        await load;
        t.ok(statuses.length > 10, `${statuses.length} requests while it was away`);
        t.same([...new Set(statuses)], [200], 'every one answered');
        const again = await spread(() => readSeries(40));
        t.ok(again[name(two)]! > 0, `used again: ${JSON.stringify(again)}`);
      },
    );

    t.test('target_session_attrs as in libpq, the primary listed among the replicas', async (t) => {
      const listing = (attrs: string) =>
        startFaultReplica(t, cluster.primary.url, {
          ...settings,
          DATABASE_READ_URL: cluster.url([cluster.primary, one], { target_session_attrs: attrs }),
        });
      const [standby, prefer] = await Promise.all([listing('standby'), listing('prefer-standby')]);
      await untilStates(['excluded', 'usable'], 'standby: the primary ruled out', standby);
      await untilStates(['excluded', 'usable'], 'prefer-standby: the primary idle', prefer);
      t.equal(
        (await readiness(standby)).report.checks.replicas.status,
        'pass',
        'ruled out by choice: no warning',
      );
      await one.pauseReplay();
      await write();
      await untilStates(['excluded', 'lagging'], 'standby: the primary still ruled out', standby);
      await untilStates(['usable', 'lagging'], 'prefer-standby: the primary while no standby is', prefer);
      const answer = await get(prefer.base, seriesPath(TUBE), { 'x-api-key': key });
      t.equal(
        JSON.parse(answer.body).measurements.length,
        imported,
        'read on the primary: the last write too',
      );
      t.equal(
        (await get(standby.base, seriesPath(TUBE), { 'x-api-key': key })).status,
        200,
        'standby: the fallback',
      );
      await one.resumeReplay();
      await untilStates(['excluded', 'usable'], 'prefer-standby: the standby again', prefer);
    });

    t.test('none usable: 503 with Retry-After, or the primary (READ_FALLBACK)', async (t) => {
      const toPrimary = await startFaultReplica(t, cluster.primary.url, settings);
      await Promise.all([one.pauseReplay(), two.pauseReplay()]);
      await write();
      await untilStates(['lagging', 'lagging'], 'both lag');
      await untilStates(['lagging', 'lagging'], 'both lag, for the other server too', toPrimary);
      const refused = await get(api.base, seriesPath(TUBE), { 'x-api-key': key });
      t.equal(refused.status, 503);
      t.equal(refused.headers['retry-after'], '5');
      t.equal((await get(api.base, '/health/ready')).status, 503, 'not ready: it can serve no read');
      t.equal(await api.metric('gwapi_reads_unavailable_total{reason="no-replica"}'), 1);

      const answer = await get(toPrimary.base, seriesPath(TUBE), { 'x-api-key': key });
      t.equal(answer.status, 200, 'READ_FALLBACK=primary (the default)');
      t.equal(
        JSON.parse(answer.body).measurements.length,
        imported,
        'the primary’s rows, the last write too',
      );
      t.equal(await toPrimary.metric('gwapi_reads_total{source="primary"}'), 1);
      const ready = await get(toPrimary.base, '/health/ready');
      t.equal(ready.status, 200, 'ready: the primary serves');
      t.match(JSON.parse(ready.body).checks.replicas, { status: 'warn', output: /reads go to the primary/ });
      await Promise.all([one.resumeReplay(), two.resumeReplay()]);
    });
  },
);

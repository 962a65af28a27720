/**
 * The production setup of docs/operations/replicas-and-failover.md ("A primary that fails over:
 * Patroni"), run: three PostgreSQL nodes under Patroni with deploy/patroni/patroni.yml and etcd, and a real
 * `gwapi serve` given every node in DATABASE_URL (target_session_attrs=read-write) and DATABASE_READ_URL. Patroni switches the leader over
 * while a client keeps asking with a key that must be looked up on the primary each time; the service
 * follows the new leader without being told, and refuses a revoked key throughout.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { connect } from '../../src/db/connect.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { addKey, addRegularSeries, revokeKey } from '../../testkit/fixtures.js';
import { startPatroniCluster } from '../../testkit/patroni.js';
import { etcd, patroni, postgres15 } from '../../testkit/prerequisites.js';
import { runCli } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { unlessInstalled } from '../helpers/installed.js';
import { startReplica } from '../helpers/serve.js';

const TUBE = '6f1f0c8e-5d0a-4b8e-9a57-2f1d3c4b5a69';
const SERIES = `/v1/groundwater-monitoring-tubes/${TUBE}/measurements?from=2024-06-01T00:00:00Z&to=2024-06-02T00:00:00Z`;
/** The bound from the promotion to a whole service. */
const WHOLE_WITHIN_MS = 5000;
/** A request that takes longer hangs (status 0): the service must answer or refuse, never wait on. */
const HANGS_AFTER_MS = 15_000;

const answered = (base: string, key: string) =>
  Promise.race([
    get(base, SERIES, { 'x-api-key': key }),
    sleep(HANGS_AFTER_MS).then(() => ({ status: 0, headers: {} as Record<string, string>, body: '' })),
  ]);

const skip = unlessInstalled(patroni) || unlessInstalled(etcd) || unlessInstalled(postgres15);

t.test('gwapi follows a Patroni switch-over of its primary', { skip, timeout: 240_000 }, async (t) => {
  const cluster = await startPatroniCluster({ nodes: 3, owner: t });
  const databaseUrl = cluster.url({ target_session_attrs: 'read-write' });
  const migrated = await runCli(['migrate'], { env: { DATABASE_URL: databaseUrl } });
  t.equal(migrated.code, 0, migrated.stderr);

  const primary = connect(databaseUrl, { max: 1 });
  t.teardown(() => primary.end({ timeout: 1 }));
  await upsertRegistry(primary, [{ name: 'Patroni well', tubes: [{ identifier: TUBE, number: '1' }] }]);
  const [tube] = await primary<{ id: number }[]>`select id from tubes where identifier = ${TUBE}`;
  await addRegularSeries(primary, tube!.id, '2024-06-01T00:00:00Z', '2024-06-02T00:00:00Z', '15 minutes');
  const live = await addKey(primary, { allTubes: true });
  const revoked = await addKey(primary, { allTubes: true });
  await revokeKey(primary, revoked.keyId);
  await primary.end({ timeout: 1 });

  const server = await startReplica(t, {
    DATABASE_URL: databaseUrl,
    DATABASE_READ_URL: cluster.url(),
    // Every request looks its key up on the primary: the switch-over cannot hide behind a cache.
    KEY_CACHE_SECONDS: '0',
    LIMITS_ENABLED: 'false',
  });
  const expected = (await get(server.base, SERIES, { 'x-api-key': live.key })).body;
  t.equal(JSON.parse(expected).measurements.length, 96);

  const seen: { at: number; status: number; retryAfter?: string; right: boolean }[] = [];
  const refusedRevoked: number[] = [];
  let asking = true;
  const asker = (async () => {
    while (asking) {
      const at = performance.now();
      const response = await answered(server.base, live.key);
      seen.push({
        at,
        status: response.status,
        retryAfter: response.headers['retry-after'] as string | undefined,
        right: response.status !== 200 || response.body === expected,
      });
      refusedRevoked.push((await answered(server.base, revoked.key)).status);
      await sleep(50);
    }
  })();

  const before = await cluster.healthy();
  // With synchronous_mode (deploy/patroni/patroni.yml), Patroni hands over only to the synchronous standby.
  const candidate = (before.find((member) => member.role === 'sync_standby') ??
    before.find((member) => member.role !== 'leader'))!.name;
  await cluster.switchover(candidate);
  let promotedAt: number | undefined;
  while (promotedAt === undefined) {
    const members = await cluster.members();
    if (
      members.some(
        (member) => member.name === candidate && member.role === 'leader' && member.state === 'running',
      )
    ) {
      promotedAt = performance.now();
    }
    await sleep(50);
  }
  await cluster.healthy();
  await sleep(WHOLE_WITHIN_MS);
  asking = false;
  await asker;

  t.ok(
    seen.every((answer) => answer.right),
    'every 200 is the series as it was',
  );
  const failures = seen.filter((answer) => answer.status !== 200);
  t.same(
    failures.filter((answer) => answer.status !== 503 || !answer.retryAfter),
    [],
    'what fails is a 503 with Retry-After',
  );
  t.same(
    seen.filter((answer) => answer.at >= promotedAt! + WHOLE_WITHIN_MS && answer.status !== 200),
    [],
    `every request from ${WHOLE_WITHIN_MS / 1000} s after the promotion is answered`,
  );
  t.ok(
    seen.filter((answer) => answer.at >= promotedAt! + WHOLE_WITHIN_MS).length > 0,
    'and some were asked then',
  );
  t.same(
    refusedRevoked.filter((status) => status !== 401 && status !== 503),
    [],
    'the revoked key is refused throughout',
  );
  t.comment(`${seen.length} requests, ${failures.length} answered 503 during the switch-over`);

  // An import after the switch-over lands on the new leader.
  const file = join(t.testdir(), 'later.csv');
  await writeFile(file, `tubeIdentifier,observedAt,value\n${TUBE},2024-06-02T00:00:00Z,9.5\n`);
  const imported = await runCli(['import', 'measurements', file], { env: { DATABASE_URL: databaseUrl } });
  t.equal(imported.code, 0, imported.stderr);
  const newLeader = connect(cluster.url({ target_session_attrs: 'read-write' }), { max: 1 });
  t.teardown(() => newLeader.end({ timeout: 1 }));
  const [row] = await newLeader<{ port: number; value: number }[]>`
    select inet_server_port() as port, measurement_value(value, value_thousandths) as value
    from measurements where observed_at = '2024-06-02T00:00:00Z'`;
  t.equal(row?.value, 9.5);
  const leader = (await cluster.members()).find((member) => member.role === 'leader');
  t.equal(leader?.name, candidate, 'Patroni kept the candidate as leader');
  t.equal(row?.port, leader?.port, 'written on the leader');
});

/**
 * Reads go to a replica with a free connection before one whose connections all hold streams (issue
 * 24, item 1): with one connection per replica and a client's year-long stream held unread on one of two
 * standbys, every other read is served at once by the other standby. Spread at random regardless, about
 * half would wait DATABASE_WAIT_SECONDS behind the stream and be refused.
 */
import t from 'tap';
import { connect } from '../../../src/db/connect.js';
import { startFaultReplica } from '../../../testkit/faults.js';
import { addRegularSeries } from '../../../testkit/fixtures.js';
import { openStream } from '../../../testkit/openStream.js';
import { replicationMissing } from '../../../testkit/replication.js';
import { seriesPath } from '../../helpers/conditional.js';
import { get } from '../../helpers/http.js';
import { OTHER, TUBE } from '../../helpers/importFixtures.js';
import { replicatedData } from '../../helpers/replicas.js';

const WAIT_SECONDS = 1;
const READS = 20;
/** A year of 1-minute data: more than loopback's socket buffers, so an unread stream holds its connection. */
const HELD = `/v1/groundwater-monitoring-tubes/${OTHER}/measurements?from=2023-01-01T00:00:00Z&to=2024-01-01T00:00:00Z`;

t.test('a read goes to a replica with a free connection', { skip: replicationMissing() }, async (t) => {
  const { cluster, standbys, key } = await replicatedData(t, [[TUBE, '2024-01-02T00:00:00Z', '1.5']]);
  const primary = connect(cluster.primary.url, { max: 1 });
  t.teardown(() => primary.end({ timeout: 1 }));
  const [other] = await primary<{ id: number }[]>`select id from tubes where identifier = ${OTHER}`;
  await addRegularSeries(primary, other!.id, '2023-01-01T00:00:00Z', '2024-01-01T00:00:00Z', '1 minute');
  await cluster.caughtUp();

  const api = await startFaultReplica(t, cluster.primary.url, {
    DATABASE_READ_URL: cluster.url(standbys),
    DATABASE_POOL_MAX: '1',
    DATABASE_WAIT_SECONDS: String(WAIT_SECONDS),
    READ_FALLBACK: 'unavailable',
  });
  const names = standbys.map((node) => `127.0.0.1:${node.port}`);
  const served = () =>
    Promise.all(names.map((name) => api.metric(`gwapi_reads_total{source="${name}"}`).then((n) => n ?? 0)));

  const held = openStream(api.base, HELD, key);
  t.teardown(() => held.abort());
  await held.firstChunk;
  held.pause();

  const before = await served();
  const answers: { status: number; ms: number }[] = [];
  for (let i = 0; i < READS; i++) {
    const started = performance.now();
    const { status } = await get(api.base, seriesPath(TUBE), { 'x-api-key': key });
    answers.push({ status, ms: performance.now() - started });
  }
  const after = await served();
  t.same(
    answers.filter((answer) => answer.status !== 200 || answer.ms >= WAIT_SECONDS * 1000),
    [],
    `all ${READS} reads answered at once, none waited behind the held stream`,
  );
  const counts = after.map((n, i) => n - before[i]!).sort();
  t.same(counts, [0, READS], 'all on the replica that had a free connection');
});

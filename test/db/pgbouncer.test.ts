/**
 * gwapi behind PgBouncer in transaction mode (Debian 12's 1.18, which has no prepared statement support),
 * with DATABASE_PREPARE=false: migrations, a real `gwapi serve` process, key lookups, discovery, a page of
 * OGC measurements and series streams, with more streams at once than PgBouncer has server connections,
 * so that server connections really pass from one transaction to the next. Every body is compared with
 * the one served directly.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { connect, type Queryable } from '../../src/db/connect.js';
import { pendingMigrations } from '../../src/db/migrate.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { type OpenStream, openStream } from '../../testkit/openStream.js';
import { findPgBouncer, type PgBouncer, startPgBouncer } from '../../testkit/pgbouncer.js';
import { startApi } from '../helpers/api.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, testDatabaseUrl } from '../helpers/database.js';
import { get, type HttpResponse } from '../helpers/http.js';
import { startReplica } from '../helpers/serve.js';
import { until } from '../helpers/until.js';

/** Server connections PgBouncer opens to the database: fewer than the streams below run at once. */
const POOL_SIZE = 2;
const STREAMS = 6;
const MONTH = '?from=2024-03-01T00:00:00Z&to=2024-04-01T00:00:00Z';
const ROWS_IN_MONTH = 31 * 24 * 60;
/**
 * What paused streams ask for: half a year, ~13 MB of JSON, far more than loopback's socket buffers
 * (which grow to several MB) and the stream's read-ahead hold, so a paused one stays mid-stream.
 */
const HALF_YEAR = '?from=2024-01-01T00:00:00Z&to=2024-07-01T00:00:00Z';

const ci = Boolean(process.env.CI) && process.env.CI !== 'false';
const skip =
  findPgBouncer() || ci
    ? false
    : 'pgbouncer is not installed here (apt-get install pgbouncer; .ci/run installs it, and under CI a missing pgbouncer fails)';

interface Pool {
  cl_active: string;
  cl_waiting: string;
  sv_active: string;
  sv_idle: string;
  sv_used: string;
}

/** PgBouncer's own view of the database's pool (admin console SHOW POOLS). */
async function pool(bouncer: PgBouncer, database: string): Promise<Record<keyof Pool, number>> {
  const rows = await bouncer.admin.unsafe<(Pool & { database: string })[]>('SHOW POOLS');
  const row = rows.find((r) => r.database === database);
  if (!row) throw new Error(`no pool for ${database} in SHOW POOLS`);
  return {
    cl_active: Number(row.cl_active),
    cl_waiting: Number(row.cl_waiting),
    sv_active: Number(row.sv_active),
    sv_idle: Number(row.sv_idle),
    sv_used: Number(row.sv_used),
  };
}

/** The parts of a response two servers must agree on. */
const answer = (response: HttpResponse) => ({ status: response.status, body: response.body });

t.test('gwapi through PgBouncer in transaction mode with DATABASE_PREPARE=false', { skip }, async (t) => {
  const bouncer = await startPgBouncer(testDatabaseUrl(), { poolSize: POOL_SIZE });
  t.teardown(bouncer.stop);
  t.comment(`PgBouncer ${bouncer.version}, pool_mode=transaction, default_pool_size=${POOL_SIZE}`);
  const db = await freshDatabase(t, { migrated: false });
  const env = { DATABASE_URL: bouncer.url(db.name), DATABASE_PREPARE: 'false' };

  const migrated = await runCli(['migrate'], { env });
  t.equal(migrated.code, 0, `gwapi migrate through PgBouncer: ${migrated.stderr}`);
  t.same(await pendingMigrations(db.sql), [], 'every migration applied');

  const tubes = await addWell(db.sql, 'Bounced', [{ number: '1' }, { number: '2' }, { number: '3' }]);
  for (const tube of tubes) {
    await addRegularSeries(db.sql, tube.id, '2024-01-01T00:00:00Z', '2024-07-01T00:00:00Z', '1 minute');
  }
  const { key } = await addKey(db.sql, { allTubes: true });
  const headers = { 'x-api-key': key };
  const seriesPath = (i: number, interval = MONTH) =>
    `/v1/groundwater-monitoring-tubes/${tubes[i % tubes.length]!.identifier}/measurements${interval}`;

  // The same requests answered straight from the database, to compare with.
  const direct = await startApi(t, { db });
  // Concurrency up so that one key can run every stream at once; the rate limit stays as it is.
  const replica = await startReplica(t, { ...env, CONCURRENCY_LIMIT: String(STREAMS + 2) });

  t.test('key lookups and discovery', async (t) => {
    const wells = await get(replica.base, '/v1/groundwater-monitoring-wells', headers);
    t.equal(wells.status, 200);
    t.same(answer(wells), answer(await get(direct.base, '/v1/groundwater-monitoring-wells', headers)));
    const unknown = await get(replica.base, '/v1/groundwater-monitoring-wells', {
      'x-api-key': `gw_${'A'.repeat(43)}`,
    });
    t.equal(unknown.status, 401, 'an unknown key is looked up and refused');
    const ready = await get(replica.base, '/health/ready');
    t.equal(ready.status, 200, 'readiness through PgBouncer');
  });

  t.test('a page of OGC measurements across tubes, its parts read by prepared statements', async (t) => {
    // From the last half day of the first tube's half year into the next tube's first rows.
    const cursorless = `/v1/ogc/collections/measurements/items?limit=1000&f=json&datetime=2024-06-30T12:00:00Z/..`;
    const [bounced, straight] = await Promise.all([
      get(replica.base, cursorless, headers),
      get(direct.base, cursorless, headers),
    ]);
    t.equal(bounced.status, 200);
    const features = (response: HttpResponse) => JSON.parse(response.body).features;
    t.equal(features(bounced).length, 1000, 'a full page');
    t.same(features(bounced), features(straight), 'the features served directly');
    const tubesOf = (response: HttpResponse) =>
      new Set(
        features(response).map(
          (f: { properties: { tubeIdentifier: string } }) => f.properties.tubeIdentifier,
        ),
      );
    t.equal(tubesOf(bounced).size, 2, 'from two tubes');
  });

  /** The series of `tubes[i % 3]` for each i, all at once through PgBouncer, compared with direct ones. */
  async function seriesLikeDirect(t: Test, streams: number[]): Promise<void> {
    const expected = await Promise.all(tubes.map((_, i) => get(direct.base, seriesPath(i), headers)));
    t.equal(JSON.parse(expected[0]!.body).measurements.length, ROWS_IN_MONTH);
    const responses = await Promise.all(streams.map((i) => get(replica.base, seriesPath(i), headers)));
    for (const [n, response] of responses.entries()) {
      const like = answer(expected[streams[n]! % tubes.length]!);
      t.same(answer(response), like, `stream ${n + 1} equals the direct one`);
    }
  }

  /** Streams that have sent their first chunk and are paused: each holds a server connection. */
  async function pausedStreams(count: number): Promise<OpenStream[]> {
    const streams = Array.from({ length: count }, (_, i) =>
      openStream(replica.base, seriesPath(i, HALF_YEAR), key),
    );
    // Each paused as soon as its own first chunk is in: a fast stream would otherwise run to its end
    // while the one before it is still starting.
    for (const stream of streams) void stream.firstChunk.then(() => stream.pause());
    await Promise.all(streams.map((stream) => stream.firstChunk));
    return streams;
  }

  t.test(`${STREAMS} series streams at once share ${POOL_SIZE} server connections`, async (t) => {
    let mostServers = 0;
    let mostWaiting = 0;
    let streaming = true;
    const watching = (async () => {
      while (streaming) {
        const now = await pool(bouncer, db.name);
        mostServers = Math.max(mostServers, now.sv_active + now.sv_idle + now.sv_used);
        mostWaiting = Math.max(mostWaiting, now.cl_waiting);
        await sleep(20);
      }
    })();
    await seriesLikeDirect(
      t,
      Array.from({ length: STREAMS }, (_, i) => i),
    ).finally(() => (streaming = false));
    await watching;
    t.ok(mostServers <= POOL_SIZE, `at most ${POOL_SIZE} server connections (saw ${mostServers})`);
    t.comment(`most clients waiting for a server connection at once: ${mostWaiting}`);
  });

  t.test('streams hold their server connections; the next request waits for one', async (t) => {
    const held = await pausedStreams(POOL_SIZE);
    const now = await pool(bouncer, db.name);
    t.equal(now.sv_active, POOL_SIZE, 'every server connection is in a paused stream’s transaction');
    const discovery = get(replica.base, '/v1/groundwater-monitoring-wells', headers);
    await until(
      'discovery waits in PgBouncer',
      () => pool(bouncer, db.name),
      (p) => p.cl_waiting > 0,
    );
    for (const stream of held) stream.resume();
    for (const stream of held) t.ok((await stream.done).complete, 'a paused stream completes');
    t.equal((await discovery).status, 200, 'and the waiting request is answered');
  });

  t.test('streams their clients abandon give their server connections back', async (t) => {
    const abandoned = await pausedStreams(POOL_SIZE);
    t.equal((await pool(bouncer, db.name)).sv_active, POOL_SIZE, 'all in use by the streams');
    for (const stream of abandoned) stream.abort();
    // Fails by timing out: a server connection still linked to a client.
    await until(
      'no server connection is in use',
      () => pool(bouncer, db.name),
      (p) => p.sv_active === 0,
    );
    const states = await db.sql<{ state: string | null }[]>`
      select state from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`;
    t.notOk(
      states.some((row) => row.state?.includes('in transaction')),
      'no server connection is left inside a transaction',
    );
    await seriesLikeDirect(t, [0, 1, 2]);
  });

  t.test('why: a statement prepared on one server connection is unknown on the other', async (t) => {
    const unnamed = await sameStatementOnTheOtherServer(t, bouncer, db.name, false);
    t.type(unnamed, 'number', 'DATABASE_PREPARE=false: the statement runs there too');
    const named = await sameStatementOnTheOtherServer(t, bouncer, db.name, true);
    t.type(named, Error, 'DATABASE_PREPARE=true: it fails');
    t.equal((named as Error & { code?: string }).code, '26000', 'invalid statement name');
    t.match((named as Error).message, /^prepared statement "\w+" does not exist$/);
  });
});

/**
 * Why DATABASE_PREPARE=false is needed with PgBouncer before 1.21: postgres.js prepares a statement on
 * the server connection PgBouncer lends it for one transaction; its next transaction may get another
 * server connection, where that name is unknown. (Outside a transaction postgres.js prepares the
 * statement again and its retry hides the fault; inside one, the error has already aborted it.)
 *
 * Runs a statement in a transaction, then again in a transaction while another client holds the server
 * connection of the first run: the second run's server process id, or its error.
 */
async function sameStatementOnTheOtherServer(
  t: Test,
  bouncer: PgBouncer,
  database: string,
  prepare: boolean,
): Promise<number | Error> {
  const sql = connect(bouncer.url(database), { max: 1, prepare });
  const other = connect(bouncer.url(database), { max: 1, prepare: false });
  t.teardown(() => Promise.all([sql.end({ timeout: 1 }), other.end({ timeout: 1 })]));
  const serverPid = async (q: Queryable) => {
    const [row] = await q<{ pid: number }[]>`select pg_backend_pid() as pid where ${1}::int = 1`;
    return row!.pid;
  };

  const first = await sql.begin(serverPid);
  // PgBouncer lends the most recently used server connection first: the other client gets the first
  // run's, and holds it in a transaction until the second run is over.
  let release = () => {};
  const holding = new Promise<void>((resolve) => (release = resolve));
  let held: number | undefined;
  const holder = other.begin(async (tx) => {
    held = await serverPid(tx);
    await holding;
  });
  await until(
    'the other client holds a server connection',
    async () => held,
    (pid) => pid !== undefined,
  );
  t.equal(held, first, 'the other client holds the server connection of the first run');
  const second = await sql.begin(serverPid).catch((error: Error) => error);
  release();
  await holder;
  if (typeof second === 'number') t.not(second, first, 'the second run is on the other server connection');
  return second;
}

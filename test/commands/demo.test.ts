/**
 * `gwapi demo` as a user runs it: a real process, an embedded PostgreSQL in a temporary folder, a free
 * port. Seeds once, reuses the data on the next run, and stops the database on SIGTERM and SIGINT.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connect } from '../../src/db/connect.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { DEMO_DAYS } from '../../src/demo/seed.js';
import { DEMO_TUBES, HIDDEN_DEMO_TUBE } from '../../src/demo/wells.js';
import { throwawayFolder } from '../../testkit/postgres.js';
import { runCli, spawnCli } from '../helpers/cli.js';

const PER_TUBE = DEMO_DAYS * 96; // 15-minute steps

interface RunningDemo {
  stop(signal: NodeJS.Signals): Promise<number | null>;
  stdout: string;
  key: string;
  keyId: string;
  base: string;
}

/** Starts `gwapi demo` and waits for its banner. */
async function startDemo(t: Test, env: Record<string, string>): Promise<RunningDemo> {
  const child = spawnCli(['demo'], { env: { PORT: '0', LOG_LEVEL: 'warn', ...env } });
  child.stdin.end();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('Stop with Ctrl-C')) resolve();
    });
    exited.then((code) => reject(new Error(`gwapi demo exited with ${code}: ${stderr}`)));
  });
  const banner = {
    key: /^(gw_[A-Za-z0-9_-]{43})$/m.exec(stdout)?.[1],
    keyId: /^Key id: (key_[0-9a-f]{12})$/m.exec(stdout)?.[1],
    base: /is serving (http:\/\/127\.0\.0\.1:\d+\/v1) /.exec(stdout)?.[1],
  };
  if (!banner.key || !banner.keyId || !banner.base) throw new Error(`no key or address in:\n${stdout}`);
  return {
    ...banner,
    key: banner.key,
    keyId: banner.keyId,
    base: banner.base,
    stdout,
    stop: (signal) => {
      child.kill(signal);
      return exited;
    },
  };
}

/** Processes whose command line names the data folder: the embedded server and its workers. */
async function postgresProcesses(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(dir)) pids.push(Number(entry));
  }
  return pids;
}

t.test('gwapi demo seeds once, serves, prints a key and requests, and stops cleanly', async (t) => {
  const folder = await throwawayFolder('gwapi-demo-');
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  const env = { GWAPI_DATA_DIR: join(folder, 'data') };
  const clusterDir = join(folder, 'data', 'postgres');

  const first = await startDemo(t, env);
  t.match(first.stdout, 'Data: 4 wells, 6 tubes, 210,816 measurements');
  t.notMatch(first.stdout, 'seeded by an earlier run');
  t.match(first.stdout, `curl -s -H 'X-API-Key: ${first.key}' ${first.base}/groundwater-monitoring-wells`);
  t.match(first.stdout, `curl -s ${first.base}/openapi.json`);
  t.match(first.stdout, `Interactive reference: ${first.base}/docs `);
  const example = /'(http:[^']+\/measurements\?from=([^&]+)&to=([^']+))'/.exec(first.stdout);
  t.ok(example, 'a measurements request');
  const [, , from, to] = example!;
  t.match(decodeURIComponent(from!), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
  t.notMatch(from!, /[+:]/, 'from is URL-encoded');
  t.notMatch(to!, /[+:]/, 'to is URL-encoded');
  t.equal(
    Date.parse(decodeURIComponent(to!)) - Date.parse(decodeURIComponent(from!)),
    30 * 86_400_000,
    'the last 30 days',
  );

  // The running demo's cluster: a second `startEmbeddedPostgres` on the folder connects to it.
  const cluster = await startEmbeddedPostgres({ dir: clusterDir });
  const sql = connect(cluster.url, { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const [counts] = await sql`
    select (select count(*)::int from wells) as wells, (select count(*)::int from tubes) as tubes,
           (select count(*)::int from measurements) as measurements`;
  t.same(counts, { wells: 4, tubes: 6, measurements: 6 * PER_TUBE });
  const perTube = await sql<{ identifier: string; n: number; first: Date; last: Date; mean: number }[]>`
    select t.identifier::text, count(*)::int as n, min(observed_at) as first, max(observed_at) as last,
           avg(value) as mean, bool_and(value = round(value::numeric, 3)::float8) as millimetres,
           bool_and(value between -10 and 40) as plausible
    from tubes t
    join (select tube_id, observed_at, measurement_value(value, value_thousandths) as value from measurements) m
      on m.tube_id = t.id
    group by t.identifier order by t.identifier`;
  t.same(
    perTube.map((r) => r.identifier),
    DEMO_TUBES.map((tube) => tube.identifier).sort(),
  );
  const dataEnd = new Date(Date.parse(decodeURIComponent(to!)));
  for (const row of perTube) {
    t.match(row, { n: PER_TUBE, millimetres: true, plausible: true });
    t.equal(row.last.getTime(), dataEnd.getTime() - 15 * 60_000, 'the series ends where the example ends');
    t.equal(row.first.getTime(), dataEnd.getTime() - DEMO_DAYS * 86_400_000);
  }
  t.equal(dataEnd.getUTCHours() + dataEnd.getUTCMinutes(), 0, 'whole UTC days');
  const means = perTube.map((r) => r.mean.toFixed(2));
  t.equal(new Set(means).size, means.length, 'every tube has its own level');

  const [key] = await sql`select key_hash, all_tubes from api_keys where id = ${first.keyId}`;
  t.same(key!.key_hash, createHash('sha256').update(first.key).digest());
  t.equal(key!.all_tubes, false);
  const granted = await sql<{ identifier: string }[]>`
    select t.identifier::text from api_key_grants g join tubes t on t.id = g.tube_id
    where g.key_id = ${first.keyId} order by 1`;
  t.same(
    granted.map((r) => r.identifier),
    DEMO_TUBES.filter((tube) => tube !== HIDDEN_DEMO_TUBE)
      .map((tube) => tube.identifier)
      .sort(),
  );
  const response = await fetch(`${first.base}/openapi.json`);
  t.equal(response.headers.get('api-version'), '1.4.0', 'the HTTP server answers on the printed address');
  await response.body?.cancel();
  const reference = await fetch(`${first.base}/docs`);
  t.equal(reference.status, 200, 'the printed reference is served');
  t.equal(reference.headers.get('content-type'), 'text/html; charset=utf-8');
  await reference.body?.cancel();

  // `gwapi keys` works beside the running demo, on the same embedded database.
  const list = await runCli(['keys', 'list'], { env });
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, new RegExp(`^${first.keyId}\\s+demo\\s+\\S+\\s+-\\s+5$`, 'm'));
  await sql.end({ timeout: 1 });

  t.equal(await first.stop('SIGTERM'), 0, 'SIGTERM: exit code 0');
  t.same(await postgresProcesses(clusterDir), [], 'the embedded PostgreSQL is stopped');
  t.notOk(existsSync(join(clusterDir, 'postmaster.pid')), 'and shut down cleanly');

  const started = Date.now();
  const second = await startDemo(t, env);
  const startup = Date.now() - started;
  t.match(second.stdout, 'Data: 4 wells, 6 tubes, 210,816 measurements');
  t.match(second.stdout, 'seeded by an earlier run');
  t.not(second.key, first.key, 'a new key');
  t.not(second.keyId, first.keyId);
  t.match(second.stdout, `/measurements?from=${from}&to=${to}'`, 'the same data, so the same interval');
  t.comment(`second start: ${startup} ms`);
  t.equal(await second.stop('SIGINT'), 0, 'Ctrl-C: exit code 0');
  t.same(await postgresProcesses(clusterDir), []);
});

import { copyFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import t from 'tap';
import type { Sql } from '../../src/db/connect.js';
import {
  type LockTimeout,
  MIGRATION_LOCK_TIMEOUT_MS,
  MIGRATIONS_DIR,
  migrate,
  pendingMigrations,
  readMigrations,
  statementsOf,
  usesTimescaleDb,
} from '../../src/db/migrate.js';
import { sampleLockWaits } from '../../testkit/lockWaits.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';
import { provesLocationColumns } from '../helpers/locations.js';
import { until } from '../helpers/until.js';

t.test('every migration has a number of its own', async (t) => {
  // Two files of one number would both be read, and the second refused as already recorded.
  const versions = (await readMigrations()).map((m) => m.version);
  t.same(
    versions,
    [...new Set(versions)].sort((a, b) => a - b),
  );
});

t.test('an empty database gets every migration, in order', async (t) => {
  const { sql } = await freshDatabase(t, { migrated: false });
  const all = await readMigrations();
  t.ok(all.length >= 2);
  t.same(
    (await pendingMigrations(sql)).map((m) => m.version),
    all.map((m) => m.version),
  );
  const result = await migrate(sql);
  t.same(
    result.applied.map((m) => m.version),
    all.map((m) => m.version),
  );
  t.same(await pendingMigrations(sql), []);
  const tables = await sql`select tablename from pg_tables where schemaname = 'public' order by 1`;
  t.same(
    tables.map((r) => r.tablename),
    [
      'api_key_grants',
      'api_keys',
      'latest_measurements',
      'measurement_changes',
      'measurement_corrections',
      'measurement_day_rollups',
      'measurements',
      'registry_version',
      'schema_migrations',
      'sync_state',
      'tubes',
      'wells',
    ],
  );
  t.equal(result.timescaledb, await usesTimescaleDb(sql));
});

t.test('an already-migrated database is left as it is', async (t) => {
  const { sql } = await freshDatabase(t);
  const before = await sql`select version, applied_at from schema_migrations order by version`;
  const result = await migrate(sql);
  t.same(result.applied, []);
  t.same(await sql`select version, applied_at from schema_migrations order by version`, before);
});

t.test('concurrent runners apply each migration exactly once', async (t) => {
  const { sql } = await freshDatabase(t, { migrated: false });
  const results = await Promise.all(Array.from({ length: 6 }, () => migrate(sql)));
  const appliedCounts = results.map((r) => r.applied.length).sort();
  const total = (await readMigrations()).length;
  t.equal(
    appliedCounts.reduce((a, b) => a + b, 0),
    total,
    'every migration applied once in all',
  );
  const rows = await sql`select version, count(*)::int as n from schema_migrations group by version`;
  t.ok(rows.every((r) => r.n === 1));
  t.equal(rows.length, total);
});

t.test('an edited migration that was already applied is refused', async (t) => {
  const { sql } = await freshDatabase(t);
  await sql`update schema_migrations set checksum = 'edited' where version = 1`;
  await t.rejects(migrate(sql), /migration 001_schema was changed after it was applied/);
});

t.test('an earlier text that a migration declares it replaces is taken for it, no other', async (t) => {
  const { sql } = await freshDatabase(t);
  const status = (await readMigrations()).find((m) => m.version === 9)!;
  t.equal(status.replaces.length, 1, "009 replaces 1.3.1's text");
  await sql`update schema_migrations set checksum = ${status.replaces[0]!} where version = 9`;
  t.same((await migrate(sql)).applied, [], 'accepted, and not applied again');
  await sql`update schema_migrations set checksum = 'edited' where version = 9`;
  await t.rejects(migrate(sql), /migration 009_status was changed after it was applied/);
});

t.test('the plain table answers one tube and one time range with an index-only scan', async (t) => {
  const { sql } = await freshDatabase(t);
  if (await usesTimescaleDb(sql)) return t.pass('hypertable: covered by the TimescaleDB suite');
  await sql`insert into wells (name) values ('W')`;
  await sql`insert into tubes (identifier, well_id, number) values (gen_random_uuid(), 1, '1'), (gen_random_uuid(), 1, '2')`;
  await sql`
    insert into measurements (tube_id, observed_at, value)
    select tube, '2024-01-01'::timestamptz + n * interval '15 minutes', n
    from generate_series(1, 2) tube, generate_series(0, 20000) n`;
  await sql`vacuum analyze measurements`;
  const plan = await sql.unsafe(`
    explain (format json)
    select observed_at, value from measurements
    where tube_id = 1 and observed_at >= '2024-02-01' and observed_at < '2024-03-01'
    order by observed_at`);
  const text = JSON.stringify(plan);
  t.match(text, /"Node Type":"Index Only Scan"/);
  t.notMatch(text, /"Node Type":"Sort"/, 'rows come in index order');
});

/** The migrations of sql/ and `extra`, a further one, in a folder of the test's. */
async function withMigration(t: Test, name: string, text: string): Promise<string> {
  const dir = t.testdir();
  for (const file of await readdir(MIGRATIONS_DIR))
    await copyFile(join(MIGRATIONS_DIR, file), join(dir, file));
  await writeFile(join(dir, name), text);
  return dir;
}

/** A transaction of its own connection that holds `lock` until `release`. */
async function holdLock(sql: Sql, lock: string) {
  const session = await sql.reserve();
  await session.unsafe('begin');
  await session.unsafe(lock);
  return {
    async release() {
      await session.unsafe('rollback');
      session.release();
    },
  };
}

/** Reads tubes every 50 ms until stopped; resolves with the slowest read, ms. */
function readTubes(sql: Sql) {
  let running = true;
  let slowest = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await sql`select count(*) from tubes`;
      slowest = Math.max(slowest, performance.now() - started);
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return slowest;
    },
  };
}

/** Slack for a busy machine on top of a lock_timeout. */
const SLACK_MS = 400;

t.test('a migration queued behind a held lock gives way to readers, then applies', async (t) => {
  const { sql } = await freshDatabase(t);
  const dir = await withMigration(t, '900_probe.sql', 'alter table tubes add column probe integer;\n');
  // A stream's transaction: it reads tubes, and keeps its lock until its body has been sent.
  const stream = await holdLock(sql, 'select from tubes limit 1');
  const lockTimeoutMs = 300;
  const timeouts: LockTimeout[] = [];
  const waits = sampleLockWaits(sql);
  const migrating = migrate(sql, {
    dir,
    lockTimeoutMs,
    attempts: 20,
    backoffMs: 100,
    onLockTimeout: (timeout) => timeouts.push(timeout),
  });
  const readers = readTubes(sql);
  await sleep(2000);
  await stream.release();
  const result = await migrating;
  const slowestRead = await readers.stop();
  const longest = await waits.stop();

  t.same(
    result.applied.map((m) => m.version),
    [900],
  );
  t.ok(slowestRead < lockTimeoutMs + SLACK_MS, `readers waited at most ${Math.round(slowestRead)} ms`);
  t.ok(
    longest.ms < lockTimeoutMs + SLACK_MS,
    `longest lock wait ${Math.round(longest.ms)} ms: ${longest.what}`,
  );
  t.ok(timeouts.length > 0, `gave way ${timeouts.length} times while the stream held its lock`);
  t.match(timeouts[0]?.oldest, /^pid \d+, idle in transaction for [\d.]+ s: select from tubes/);
  t.same(
    await sql`select column_name from information_schema.columns where table_name = 'tubes' and column_name = 'probe'`,
    [{ column_name: 'probe' }],
  );
});

t.test('after its last attempt a migration fails with a clear error, and nothing of it stays', async (t) => {
  const { sql } = await freshDatabase(t);
  const dir = await withMigration(
    t,
    '900_probe.sql',
    'create table probe (id integer);\nalter table tubes add column probe integer;\n',
  );
  const stream = await holdLock(sql, 'select from tubes limit 1');
  t.teardown(() => stream.release());
  await t.rejects(
    migrate(sql, { dir, lockTimeoutMs: 200, attempts: 2, backoffMs: 50 }),
    /^migration 900_probe: no lock within lock_timeout \(200 ms\) in 2 attempts, so nothing waits behind it; oldest transaction: pid \d+, idle in transaction for [\d.]+ s: select from tubes limit 1; run `gwapi migrate` again/,
  );
  t.same(await sql`select version from schema_migrations where version = 900`, []);
  t.same(await sql`select to_regclass('probe') as name`, [{ name: null }], 'its transaction rolled back');
  t.same(await sql`show lock_timeout`, [{ lock_timeout: '0' }], 'the pooled connection is as it was');
});

t.test('a concurrent index build that gave up is dropped and built again, not left invalid', async (t) => {
  const { sql } = await freshDatabase(t);
  const dir = await withMigration(
    t,
    '900_probe.sql',
    '-- gwapi:no-transaction\ncreate index concurrently if not exists tubes_probe on tubes (number);\n',
  );
  // An import's transaction: it has written to tubes, which the build must wait for.
  const importing = await holdLock(sql, 'update tubes set number = number where false');
  await sql.unsafe('select 1'); // the pool has a connection besides the held one
  const timeouts: LockTimeout[] = [];
  let sawInvalid = false;
  const migrating = migrate(sql, {
    dir,
    lockTimeoutMs: 200,
    concurrentBuildLockTimeoutMs: 200,
    attempts: 20,
    backoffMs: 100,
    onLockTimeout: (timeout) => timeouts.push(timeout),
  });
  const watch = (async () => {
    const deadline = performance.now() + 1500;
    while (performance.now() < deadline) {
      const [index] =
        await sql`select indisvalid from pg_index where indexrelid = to_regclass('tubes_probe')`;
      if (index && !index.indisvalid) sawInvalid = true;
      await sleep(20);
    }
  })();
  await watch;
  await importing.release();
  t.same(
    (await migrating).applied.map((m) => m.version),
    [900],
  );
  t.ok(timeouts.length > 0 && sawInvalid, 'the build gave up and left an invalid index meanwhile');
  t.match(timeouts[0]!.what, /^migration 900_probe \(create index concurrently if not exists tubes_probe/);
  t.same(
    await sql`select indisvalid, indisready from pg_index where indexrelid = to_regclass('tubes_probe')`,
    [{ indisvalid: true, indisready: true }],
    'the index is valid',
  );
});

t.test('a non-transactional migration is split into its statements', async (t) => {
  t.same(
    statementsOf(
      '-- gwapi:no-transaction\n-- why\ncreate index concurrently a on t (x);\n\n-- next\ndrop index b ;\n',
    ),
    ['-- gwapi:no-transaction\n-- why\ncreate index concurrently a on t (x)', '-- next\ndrop index b'],
  );
  t.same(
    statementsOf(
      'create function f() returns int language sql as $$ select 1; $$;\ndo $b$ begin\n  perform 1;\nend $b$;\n',
    ),
    [
      'create function f() returns int language sql as $$ select 1; $$',
      'do $b$ begin\n  perform 1;\nend $b$',
    ],
    'not inside a dollar-quoted body',
  );
  const all = await readMigrations();
  t.same(
    all.filter((m) => !m.transactional).map((m) => m.version),
    [7, 9, 11, 17],
    '007, 009, 011 and 017 run outside a transaction',
  );
});

t.test('007: the prune of the change log reads the recorded_at index', async (t) => {
  const { sql } = await freshDatabase(t);
  t.same(
    await sql`select indisvalid from pg_index where indexrelid = to_regclass('measurement_changes_recorded_at')`,
    [{ indisvalid: true }],
  );
  await sql`
    insert into measurement_changes (tube_id, first_at, last_at, recorded_at)
    select n % 100, t, t, t
    from generate_series(1, 20000) n, lateral (select now() - n * interval '10 minutes' as t) at`;
  await sql`analyze measurement_changes`;
  const plan = await sql.unsafe(`
    explain (format json) delete from measurement_changes where recorded_at < now() - interval '130 days'`);
  t.match(JSON.stringify(plan), /"Index Name":"measurement_changes_recorded_at"/);
  t.equal(MIGRATION_LOCK_TIMEOUT_MS > 0, true);
});

t.test(
  'gwapi migrate: 007 waits for an import past lock_timeout, blocking no one, then applies',
  async (t) => {
    const { sql, url } = await freshDatabase(t);
    await sql`drop index measurement_changes_recorded_at`;
    await sql`delete from schema_migrations where version = 7`;
    // An import's transaction: it has written to the change log, and the build must wait for it.
    const importing = await holdLock(sql, 'lock table measurement_changes in row exclusive mode');
    const migrating = runCli(['migrate'], { env: { DATABASE_URL: url } });
    await until(
      'the build waits for the import',
      () =>
        sql`select from pg_stat_activity where query like '%create index concurrently%' and wait_event_type = 'Lock'`,
      (rows) => rows.length > 0,
      60_000,
    );
    // Meanwhile the change log takes writes and reads: nothing queues behind the build.
    const written = performance.now();
    await sql`insert into measurement_changes (tube_id, first_at, last_at) values (1, now(), now())`;
    await sql`select count(*) from measurement_changes`;
    t.ok(
      performance.now() - written < MIGRATION_LOCK_TIMEOUT_MS,
      'a write and a read beside the waiting build',
    );
    await sleep(MIGRATION_LOCK_TIMEOUT_MS * 1.5);
    await importing.release();
    const { code, stdout, stderr } = await migrating;
    t.equal(code, 0, stderr);
    t.match(stdout, /^applied 007_changes_recorded_at; /);
    t.notMatch(stderr, /gave up waiting/, 'it waited past lock_timeout without giving up');
    t.same(
      await sql`select indisvalid from pg_index where indexrelid = to_regclass('measurement_changes_recorded_at')`,
      [{ indisvalid: true }],
    );
  },
);

t.test('008: locations and elevations on plain PostgreSQL', async (t) => {
  const { sql } = await freshDatabase(t);
  await provesLocationColumns(t, sql);
});

import t from 'tap';
import { migrate, pendingMigrations, readMigrations, usesTimescaleDb } from '../../src/db/migrate.js';
import { freshDatabase } from '../helpers/database.js';

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
      'measurement_changes',
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

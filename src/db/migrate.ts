/**
 * Migrations: numbered plain-SQL files in `sql/`, each applied once in its own transaction and recorded
 * with a checksum. A transaction-scoped advisory lock serialises concurrent runners (several replicas
 * starting at once): the second waits, then finds the work done.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Queryable, Sql } from './connect.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

/** Arbitrary but fixed: "gwapi" in ASCII. Shared by every replica and every version of this program. */
const MIGRATION_LOCK = 0x6777617069;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: Migration[];
  timescaledb: boolean;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const text = await readFile(`${dir}/${file}`, 'utf8');
      return {
        version: Number(file.slice(0, 3)),
        name: file.slice(4, -4),
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    }),
  );
}

export class MigrationChangedError extends Error {
  constructor(migration: Migration) {
    super(
      `migration ${String(migration.version).padStart(3, '0')}_${migration.name} was changed after it was applied; ` +
        'add a new migration instead of editing an applied one',
    );
  }
}

export async function migrate(sql: Sql, dir = MIGRATIONS_DIR): Promise<MigrateResult> {
  const applied: Migration[] = [];
  for (const migration of await readMigrations(dir)) {
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await tx`
        create table if not exists schema_migrations (
          version integer primary key,
          name text not null,
          checksum text not null,
          applied_at timestamptz not null default now()
        )`;
      const [done] = await tx<{ checksum: string }[]>`
        select checksum from schema_migrations where version = ${migration.version}`;
      if (done) {
        if (done.checksum !== migration.checksum) throw new MigrationChangedError(migration);
        return;
      }
      await tx.unsafe(migration.sql);
      await tx`
        insert into schema_migrations (version, name, checksum)
        values (${migration.version}, ${migration.name}, ${migration.checksum})`;
      applied.push(migration);
    });
  }
  return { applied, timescaledb: await usesTimescaleDb(sql) };
}

/** Migrations in `sql/` not yet recorded in the database (empty when the schema is current). */
export async function pendingMigrations(sql: Sql, dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const all = await readMigrations(dir);
  const [table] = await sql`select to_regclass('schema_migrations') as name`;
  if (!table?.name) return all;
  const done = new Set(
    (await sql<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version),
  );
  return all.filter((m) => !done.has(m.version));
}

/** Whether `measurements` is a TimescaleDB hypertable (false on plain PostgreSQL). */
export async function usesTimescaleDb(sql: Queryable): Promise<boolean> {
  const [ext] = await sql`select 1 from pg_extension where extname = 'timescaledb'`;
  if (!ext) return false;
  const [hypertable] = await sql`
    select 1 from timescaledb_information.hypertables where hypertable_name = 'measurements'`;
  return Boolean(hypertable);
}

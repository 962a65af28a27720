/**
 * Every test file gets a database of its own on the suite's PostgreSQL (TEST_DATABASE_URL), so files
 * run in parallel without seeing each other's rows. It is dropped when the test ends.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import { connect, type Sql } from '../../src/db/connect.js';
import { MIGRATIONS_DIR, migrate } from '../../src/db/migrate.js';
import { createDatabase, migrateAlone } from '../../testkit/postgres.js';
import { timescaleMissing } from '../../testkit/timescale.js';

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the suite with `npm test`');
  return url;
}

export interface TestDatabase {
  sql: Sql;
  url: string;
  name: string;
}

/**
 * The suite's native TimescaleDB server (TEST_TIMESCALE_URL, started by `npm test` where it is built),
 * or undefined after skipping `t` with the one line that says why. In CI, where .ci/run builds it, a
 * missing server fails instead.
 */
export function timescaleServerOrSkip(t: Test): string | undefined {
  const url = process.env.TEST_TIMESCALE_URL;
  if (url) return url;
  const why = timescaleMissing() ?? 'TEST_TIMESCALE_URL is not set: run the suite with `npm test`';
  if (process.env.CI) throw new Error(`${why} (.ci/run builds it, and under CI its tests must run)`);
  t.plan(0, why);
  return undefined;
}

/** A new empty database (migrated unless told otherwise), dropped at the end of `t`. */
export async function freshDatabase(
  t: Test,
  options: { migrated?: boolean; server?: string } = {},
): Promise<TestDatabase> {
  const server = options.server ?? testDatabaseUrl();
  const admin = connect(server, { max: 1 });
  const name = `gwtest_${randomBytes(6).toString('hex')}`;
  const url = await createDatabase(admin, server, name);
  // postgres.js opens no connection before the first query: every one of this pool's starts after the
  // migrations, with the settings they gave the database.
  const sql = connect(url, { max: 10 });
  t.teardown(async () => {
    await sql.end({ timeout: 1 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  if (options.migrated ?? true) await migrateAlone(url);
  return { sql, url, name };
}

/**
 * A database a release before sql/016 filled (by `fill`, on its migrations up to 015), then upgraded:
 * 016 on a filled table leaves `value` NOT NULL and every row a double, as the release before reads
 * them, until `gwapi migrate --finish` (src/db/finish.ts).
 */
export async function upgradedDatabase(
  t: Test,
  fill: (sql: Sql) => Promise<void>,
  options: { server?: string } = {},
): Promise<TestDatabase> {
  const db = await freshDatabase(t, { ...options, migrated: false });
  const before = t.testdir();
  for (const file of await readdir(MIGRATIONS_DIR)) {
    if (/^(00\d|01[0-5])_.*\.sql$/.test(file)) await copyFile(join(MIGRATIONS_DIR, file), join(before, file));
  }
  await migrate(db.sql, { dir: before });
  await fill(db.sql);
  await migrate(db.sql);
  return db;
}

/**
 * The two engines a test runs on: the suite's PostgreSQL (server undefined) and native TimescaleDB
 * (null after skipping the test where it is not built: timescaleServerOrSkip).
 */
export const ENGINES = [
  { name: 'plain PostgreSQL', server: (_t: Test): string | undefined | null => undefined },
  { name: 'TimescaleDB', server: (t: Test): string | undefined | null => timescaleServerOrSkip(t) ?? null },
] as const;

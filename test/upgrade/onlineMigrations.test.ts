/**
 * Every migration since 1.2.0, applied online: on plain PostgreSQL and on native TimescaleDB with
 * compressed chunks, on a filled table, while 1.2.0 (from a git worktree) serves series and imports
 * measurements, no request and no import fails and no session waits for a lock longer than the
 * migrations' lock_timeout. And a database of each release since (1.2.0, 1.3.0, 1.3.1) upgrades to the
 * schema a new install gets, once finished (`gwapi migrate --finish`) but for what a filled table keeps
 * (the key, checks not valid): the migrations this release rewrote declare the texts they replace.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { finishMigrations } from '../../src/db/finish.js';
import {
  MIGRATION_LOCK_TIMEOUT_MS,
  migrate,
  pendingMigrations,
  readMigrations,
  usesTimescaleDb,
} from '../../src/db/migrate.js';
import { addKey, addNetwork } from '../../testkit/fixtures.js';
import { outcome, spawnGwapi, spawnReplica } from '../../testkit/gwapi.js';
import { LOCK_WAIT_SLACK_MS, sampleLockWaits } from '../../testkit/lockWaits.js';
import { captureProcess } from '../../testkit/outputCapture.js';
import {
  checkoutRelease,
  PREVIOUS_RELEASE,
  RELEASES,
  releaseMigrations,
} from '../../testkit/previousRelease.js';
import { ENGINES, freshDatabase } from '../helpers/database.js';
import { get } from '../helpers/http.js';

const DAY = 86_400_000;
/** The history: 400 days of hourly levels up to yesterday, of which what is older than 180 days compressed. */
const HISTORY_DAYS = 400;
const TUBES = 120;

/** Columns, constraints, indexes and functions of the public schema, one line each. */
const schemaOf = async (sql: Sql) =>
  (
    await sql<{ line: string }[]>`
      select 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
             coalesce(column_default, '') as line
      from information_schema.columns where table_schema = 'public'
      union all
      select 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      from pg_constraint where connamespace = 'public'::regnamespace
      union all
      select 'index ' || indexdef from pg_indexes where schemaname = 'public'
      union all
      select 'function ' || proname || ' ' || md5(prosrc) from pg_proc where pronamespace = 'public'::regnamespace
      union all
      select 'sequence ' || sequencename from pg_sequences where schemaname = 'public'
      order by 1`
  ).map((row) => row.line);

// Two engines, each with a release checked out and served while a filled table migrates: on a busy
// machine they outlast the suite's timeout per file.
t.setTimeout(20 * 60_000);

for (const engine of ENGINES) {
  t.test(`${engine.name}: each release's database upgrades to a new install's schema`, async (t) => {
    const server = engine.server(t);
    if (server === null) return;
    const fresh = await freshDatabase(t, { server });
    const expected = await schemaOf(fresh.sql);
    for (const release of RELEASES) {
      const db = await freshDatabase(t, { server, migrated: false });
      await migrate(db.sql, {
        dir: await releaseMigrations(release.commit, join(t.testdir(), release.version)),
      });
      await addNetwork(db.sql, 3, {
        from: '2024-01-01T00:00:00Z',
        to: '2024-03-01T00:00:00Z',
        step: '1 hour',
      });
      if (release.version === '1.3.0') {
        // Its 009 kept prior versions in a table of another shape, which 1.3.1's text replaced.
        await t.rejects(
          migrate(db.sql),
          { message: /^migration 009_status was changed/ },
          '1.3.0: refused, as by 1.3.1',
        );
        continue;
      }
      const applied = (await migrate(db.sql)).applied.map((m) => m.version);
      t.same(await pendingMigrations(db.sql), [], `${release.version}: nothing pending (applied ${applied})`);
      const migrated = await schemaOf(db.sql);
      // Once no replica of the release before serves (docs/operations/upgrade.md).
      await finishMigrations(db.sql);
      const upgraded = await schemaOf(db.sql);
      t.same(
        migrated.filter((line) => !upgraded.includes(line)),
        ['column measurements.value double precision NO '],
        `${release.version}: before --finish, value NOT NULL, as the release before writes it`,
      );
      // 009 and 016 on a filled table: the key as the release left it (the optional rebuild of
      // upgrade.md's "The key"), and the checks they added not valid.
      const key = release === PREVIOUS_RELEASE ? 'INCLUDE (value)' : 'INCLUDE (value, status)';
      const notValid =
        release === PREVIOUS_RELEASE
          ? /measurements_(status|one_value) CHECK/
          : /measurements_one_value CHECK/;
      const asBefore = expected.map((line) =>
        /measurements_pkey /.test(line)
          ? line.replace('INCLUDE (value, value_thousandths, status)', key)
          : notValid.test(line)
            ? `${line} NOT VALID`
            : line,
      );
      t.not(asBefore.join('\n'), expected.join('\n'));
      t.same(
        upgraded,
        asBefore,
        `${release.version}, finished: the schema of a new install, but for the key and the checks`,
      );
      if (release === PREVIOUS_RELEASE) {
        t.same(
          await db.sql`select count(*)::int as tubes from latest_measurements`,
          [{ tubes: 3 }],
          `${release.version}: the latest of every tube`,
        );
      }
      const rollups = await db.sql`select * from measurement_day_rollups order by tube_id, day, statuses`;
      t.equal(rollups.length, 3 * 60, `${release.version}: a rollup per tube and day`);
      await db.sql`select rollup_tube_measurements(id) from tubes`;
      t.same(
        await db.sql`select * from measurement_day_rollups order by tube_id, day, statuses`,
        rollups,
        `${release.version}: the rollups as summed again`,
      );
    }
  });

  t.test(
    `${engine.name}: every migration since ${PREVIOUS_RELEASE.version} while it serves and imports`,
    async (t) => {
      const server = engine.server(t);
      if (server === null) return;
      const db = await freshDatabase(t, { server, migrated: false });
      const { sql } = db;
      // One folder: each call of t.testdir() empties it.
      const folder = t.testdir();
      const releaseSql = await releaseMigrations(PREVIOUS_RELEASE.commit, join(folder, 'sql'));
      await migrate(sql, { dir: releaseSql });
      const yesterday = new Date(Math.floor(Date.now() / DAY) * DAY - DAY);
      const from = new Date(yesterday.getTime() - HISTORY_DAYS * DAY);
      const tubes = await addNetwork(sql, TUBES, {
        from: from.toISOString(),
        to: yesterday.toISOString(),
        step: '1 hour',
      });
      const timescale = await usesTimescaleDb(sql);
      if (timescale) {
        const [{ chunks }] = (await sql`
        select count(compress_chunk(c))::int as chunks
        from show_chunks('measurements', older_than => interval '180 days') c`) as [{ chunks: number }];
        t.ok(chunks >= 6, `${chunks} chunks compressed`);
      }
      const { key } = await addKey(sql, { allTubes: true });

      const release = await checkoutRelease();
      t.teardown(() => release.remove());
      const replica = await spawnReplica(
        { DATABASE_URL: db.url, RATE_LIMIT_BURST: '1000000', RATE_LIMIT_PER_SECOND: '1000000' },
        { root: release.root, owner: t, watch: captureProcess },
      );

      let running = true;
      const answers: number[] = [];
      const reads = (async () => {
        for (let i = 0; running; i++) {
          const tube = tubes[i % tubes.length]!;
          // A month, alternately among the compressed chunks and the newest ones.
          const end = i % 2 ? yesterday.getTime() : from.getTime() + 60 * DAY;
          const path =
            `/v1/groundwater-monitoring-tubes/${tube.identifier}/measurements` +
            `?from=${new Date(end - 30 * DAY).toISOString()}&to=${new Date(end).toISOString()}`;
          answers.push((await get(replica.base, path, { 'x-api-key': key })).status);
        }
      })();
      const imports: { code: number | null; stderr: string }[] = [];
      const writes = (async () => {
        for (let i = 0; running; i++) {
          const file = join(folder, `import-${i}.csv`);
          const at = new Date(yesterday.getTime() + (i % 24) * 3_600_000).toISOString();
          const rows = tubes.slice(0, 20).map((tube) => `${tube.identifier},${at},${(i % 7) / 10}`);
          await writeFile(file, `tubeIdentifier,observedAt,value\n${rows.join('\n')}\n`);
          imports.push(
            await outcome(
              spawnGwapi(['import', 'measurements', file], {
                root: release.root,
                env: { DATABASE_URL: db.url },
              }),
            ),
          );
        }
      })();
      await sleep(1000);

      const waits = sampleLockWaits(sql);
      const result = await migrate(sql);
      const longest = await waits.stop();
      while (imports.length < 2) await sleep(100);
      running = false;
      await Promise.all([reads, writes]);

      const before = (await readMigrations(releaseSql)).map((m) => m.version);
      t.same(
        result.applied.map((m) => m.version),
        (await readMigrations()).map((m) => m.version).filter((version) => !before.includes(version)),
        'every migration since applied',
      );
      t.ok(answers.length > 0, `${answers.length} requests`);
      t.same(
        answers.filter((status) => status !== 200),
        [],
        'every request answered 200',
      );
      t.same(
        imports.filter((run) => run.code !== 0),
        [],
        `${imports.length} imports of ${PREVIOUS_RELEASE.version}, none failed`,
      );
      t.ok(
        longest.ms <= MIGRATION_LOCK_TIMEOUT_MS + LOCK_WAIT_SLACK_MS,
        `the longest lock wait, ${Math.round(longest.ms)} ms (${longest.what || 'none'}), within lock_timeout`,
      );
    },
  );
}

/**
 * `gwapi migrate --finish` (src/db/finish.ts) on an upgraded, filled database, on plain PostgreSQL and
 * on native TimescaleDB with compressed chunks: `value` may be null after it, every fitting row is
 * stored as thousandths and decodes to the very same double, nothing a client's validator or sync token
 * derives from moves, and a second run does nothing. It gives way to an import holding a tube, and two
 * runs at once move each row once.
 */
import type { Test } from 'tap';
import t from 'tap';
import { connect, type Sql } from '../../src/db/connect.js';
import { type ChunkFinished, finishMigrations } from '../../src/db/finish.js';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { storesThousandths } from '../../src/db/valueStorage.js';
import { addNetwork, addWell, type TubeFixture } from '../../testkit/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { ENGINES, freshDatabase, upgradedDatabase } from '../helpers/database.js';
import { until } from '../helpers/until.js';
import { bytesPerRow, stored } from '../helpers/valueStorage.js';

const TUBES = 12;
/** Values no three places hold, so they stay doubles. */
const DOUBLES = ['0.30000000000000004', '-0', '1e-7', '2147483.648', '0.6709999999999999'];

/**
 * An upgraded database (helpers/database.ts) of 400 days of hourly levels of TUBES tubes (to the
 * millimetre, as a logger's) and a few that are not; on TimescaleDB the history older than 180 days
 * compressed.
 */
async function filledAndUpgraded(t: Test, server: string | undefined) {
  let tubes: TubeFixture[] = [];
  const db = await upgradedDatabase(
    t,
    async (sql) => {
      const now = Math.floor(Date.now() / 86_400_000) * 86_400_000;
      tubes = await addNetwork(sql, TUBES, {
        from: new Date(now - 400 * 86_400_000).toISOString(),
        to: new Date(now - 86_400_000).toISOString(),
        step: '1 hour',
      });
      await sql`
        insert into measurements (tube_id, observed_at, value)
        select ${tubes[0]!.id}, ${new Date(now - 86_400_000).toISOString()}::timestamptz + n * interval '1 minute',
               v::float8
        from unnest(${DOUBLES}::text[]) with ordinality as d (v, n)`;
      if (await usesTimescaleDb(sql)) {
        await sql`select compress_chunk(c) from show_chunks('measurements', older_than => interval '180 days') c`;
      }
    },
    { server },
  );
  t.equal(await storesThousandths(db.sql), false, 'upgraded: value NOT NULL, as the release before needs');
  return { ...db, tubes, timescale: await usesTimescaleDb(db.sql) };
}

/** What a client's reads and validators derive from, each value by its bits. */
async function observable(sql: Sql) {
  const [state] = await sql`
    select (select md5(string_agg(tube_id || ' ' || observed_at::text || ' ' ||
                                  encode(float8send(measurement_value(value, value_thousandths)), 'hex') || ' ' || status,
                                  ',' order by tube_id, observed_at))
            from measurements) as measurements,
           (select string_agg(id || ':' || series_version || ':' || series_changed_at::text, ',' order by id)
            from tubes) as versions,
           (select count(*)::int from measurement_changes) as changes,
           (select count(*)::int from measurement_corrections) as corrections,
           (select md5(string_agg(r::text, ',' order by r.tube_id, r.day, r.statuses))
            from measurement_day_rollups r) as rollups,
           (select md5(string_agg(l::text, ',' order by l.tube_id, l.status)) from latest_measurements l) as latest`;
  return state!;
}

for (const engine of ENGINES) {
  t.test(`${engine.name}: an upgraded database finished, and finished again`, async (t) => {
    const server = engine.server(t);
    if (server === null) return;
    const { sql, url, name, timescale } = await filledAndUpgraded(t, server);
    const before = await observable(sql);
    const { fitting, doubles } = await stored(sql);
    t.equal(doubles, TUBES * 399 * 24 + DOUBLES.length, 'every row a double before');
    const bytesBefore = await bytesPerRow(sql, timescale);

    const chunks: ChunkFinished[] = [];
    const started = performance.now();
    // Several transactions a chunk, each statement under the generic plan a large table soon gets.
    await sql.unsafe(`alter database ${name} set plan_cache_mode = force_generic_plan`);
    const generic = connect(url, { max: 4 });
    t.teardown(() => generic.end());
    const result = await finishMigrations(generic, {
      rowsPerTransaction: 2000,
      onChunk: (chunk) => chunks.push(chunk),
    });
    const seconds = (performance.now() - started) / 1000;
    t.equal(result.madeNullable, true);
    t.equal(result.moved, fitting, `${fitting} rows moved`);
    t.equal(fitting, doubles - DOUBLES.length, 'all but the values of more than three places');
    t.same(await stored(sql), { doubles: DOUBLES.length, thousandths: fitting, fitting: 0 });
    t.equal(await storesThousandths(sql), true, 'value may be null: writers store thousandths');
    t.same(
      await observable(sql),
      before,
      'every value the same double; no version, change, rollup or latest moved',
    );
    t.equal(
      chunks.reduce((sum, chunk) => sum + chunk.moved, 0),
      fitting,
    );
    const bytesAfter = await bytesPerRow(sql, timescale);
    t.comment(
      `${engine.name}: ${fitting} rows in ${seconds.toFixed(2)} s (${((seconds * 1e6) / fitting).toFixed(1)} µs a row), ` +
        `${chunks.length} chunks; ${bytesBefore.toFixed(2)} → ${bytesAfter.toFixed(2)} bytes a row` +
        (timescale ? ' of the compressed chunks' : ''),
    );
    if (timescale) {
      const compressed = chunks.filter((chunk) => chunk.recompressed);
      t.ok(compressed.length >= 6, `${compressed.length} compressed chunks recompressed`);
      const [partial] = await sql<{ partial: number }[]>`
        select count(*)::int as partial from _timescaledb_catalog.chunk c
        join _timescaledb_catalog.hypertable h on h.id = c.hypertable_id
        where h.table_name = 'measurements' and c.status & 8 = 8`;
      t.equal(partial!.partial, 0, 'no chunk left partial');
      t.ok(bytesAfter < bytesBefore, 'the bytes a row fall');
    }

    const again: ChunkFinished[] = [];
    const second = await finishMigrations(sql, { onChunk: (chunk) => again.push(chunk) });
    t.same(
      { madeNullable: second.madeNullable, moved: second.moved, applied: second.applied },
      { madeNullable: false, moved: 0, applied: [] },
      'a second run does nothing',
    );
    t.same(
      again.filter((chunk) => chunk.moved > 0 || chunk.recompressed),
      [],
    );
    t.same(await observable(sql), before);
  });

  t.test(`${engine.name}: the finish gives way to an import holding a tube`, async (t) => {
    const server = engine.server(t);
    if (server === null) return;
    const { sql, tubes } = await filledAndUpgraded(t, server);
    const first = tubes[0]!.id;
    const last = tubes.at(-1)!.id;
    const movedOf = async (tube: number) => {
      const [row] = await sql<{ moved: number }[]>`
        select count(value_thousandths)::int as moved from measurements where tube_id = ${tube}`;
      return row!.moved;
    };
    // An import of the first tube, as changeLog.ts's lockTubes takes it, held open.
    const holder = await sql.reserve();
    t.teardown(() => holder.release());
    await holder`begin`;
    await holder`select from tubes where id = ${first} for no key update`;
    // A transaction a tube, so that each chunk's first transaction meets the held tube.
    const finished = finishMigrations(sql, { rowsPerTransaction: 1 });
    await until(
      'the last tube moves while the first is held',
      () => movedOf(last),
      (moved) => moved > 0,
    );
    t.equal(await movedOf(first), 0, "the held tube's rows wait");
    await holder`commit`;
    const result = await finished;
    t.equal(await movedOf(first), 399 * 24, 'then they move too');
    t.same(await stored(sql), { doubles: DOUBLES.length, thousandths: result.moved, fitting: 0 });
  });

  t.test(`${engine.name}: two runs at once move each row once`, async (t) => {
    const server = engine.server(t);
    if (server === null) return;
    const { sql } = await filledAndUpgraded(t, server);
    const { fitting } = await stored(sql);
    const before = await observable(sql);
    const runs = await Promise.all([
      finishMigrations(sql, { rowsPerTransaction: 2000 }),
      finishMigrations(sql, { rowsPerTransaction: 2000 }),
    ]);
    t.equal(runs[0]!.moved + runs[1]!.moved, fitting);
    t.same(runs.map((run) => run.madeNullable).sort(), [false, true], 'one of them let value be null');
    t.same(await stored(sql), { doubles: DOUBLES.length, thousandths: fitting, fitting: 0 });
    t.same(await observable(sql), before);
  });
}

t.test('gwapi migrate --finish says what it moved, and a new install has nothing to move', async (t) => {
  const db = await freshDatabase(t);
  const tubes = await addWell(db.sql, 'W', [{ number: '1' }, { number: '2' }]);
  // Doubles that fit, as no writer of this release stores them on a new install (the fixtures store
  // thousandths): what the finish moves.
  await db.sql`
    insert into measurements (tube_id, observed_at, value)
    select tube, at, 1.25
    from unnest(${tubes.map((tube) => tube.id)}::int[]) as tube,
         generate_series('2024-01-01T00:00:00Z'::timestamptz, '2024-01-01T23:00:00Z', interval '1 hour') as at`;
  const run = await runCli(['migrate', '--finish'], { env: { DATABASE_URL: db.url } });
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /^schema is up to date; measurements: plain PostgreSQL table$/m);
  t.match(
    run.stdout,
    /^gwapi migrate --finish: measurements \(1 of 1\): 48 rows into thousandths in [\d.]+ s$/m,
    'the doubles that fit are moved',
  );
  t.match(
    run.stdout,
    /^gwapi migrate --finish: 48 rows moved into thousandths in [\d.]+ s; the database is finished$/m,
  );
  const help = await runCli(['migrate', '--help']);
  t.match(help.stdout.replace(/\s+/g, ' '), /--finish only when no replica of the release before serves/);
});

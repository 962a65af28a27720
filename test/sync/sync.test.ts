/**
 * Sync tokens against real PostgreSQL and the real importers: deltas hold exactly what imports wrote
 * between two snapshots (nothing missed, nothing extra, nothing for a re-import), aggregated deltas
 * recompute whole buckets, 410 when the key's view changed or the history is pruned, and the
 * concurrency case a "largest revision seen" token gets wrong.
 */
import { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import { connect, type Sql } from '../../src/db/connect.js';
import { pruneChangeLog } from '../../src/importers/measurements/changeLog.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { currentSyncPoint, loadSyncSecret, type SyncViewer } from '../../src/sync/sql.js';
import { issueSyncToken, readSyncToken, type SyncPoint } from '../../src/sync/token.js';
import { freshDatabase } from '../helpers/database.js';
import { csvOf, heldImport, minuteRows, OTHER, TUBE } from '../helpers/importFixtures.js';
import { seededRandom } from '../helpers/random.js';
import {
  ALL,
  bucketLine,
  type DeltaOptions,
  point,
  snapshotRead,
  syncDelta,
  wholeBuckets,
} from '../helpers/sync.js';
import { until } from '../helpers/until.js';

const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-02-01T00:00:00Z';
const delta = (sql: Sql, since: SyncPoint, tubeIds: number[], options: DeltaOptions = {}) =>
  syncDelta(sql, since, tubeIds, { from: FROM, to: TO, ...options });

const rows = minuteRows;
const load = (sql: Sql, lines: string[]) =>
  importMeasurements(sql, Readable.from([csvOf(lines)]), { name: 'data.csv' });

interface Fixture {
  sql: Sql;
  url: string;
  tube: number;
  other: number;
}

async function fixture(t: Test): Promise<Fixture> {
  const { sql, url } = await freshDatabase(t);
  await upsertRegistry(sql, [
    { name: 'W1', tubes: [{ identifier: TUBE, number: '1' }] },
    { name: 'W2', tubes: [{ identifier: OTHER, number: '1' }] },
  ]);
  const ids = await sql<{ id: number }[]>`select id from tubes order by identifier`;
  return { sql, url, tube: ids[0]!.id, other: ids[1]!.id };
}

/** The rows `delta` gives for `lines` of the CSV, at tube position `position`. */
const expected = (position: number, lines: string[]) =>
  lines.map((line) => {
    const [, at, value] = line.split(',');
    return `${position} ${at} ${Number(value)}`;
  });

const changeRows = async (sql: Sql) =>
  (
    await sql<{ run: string }[]>`
    select tube_id || ' ' || to_char(first_at at time zone 'UTC', 'HH24:MI') || '-' ||
           to_char(last_at at time zone 'UTC', 'HH24:MI') as run
    from measurement_changes where not corrected order by xid, tube_id, first_at`
  ).map((r) => r.run);

/** The corrections recorded, as `HH:MI value-after`, in time order. */
const correctionRows = async (sql: Sql) =>
  (
    await sql<{ row: string }[]>`
    select to_char(observed_at at time zone 'UTC', 'HH24:MI') || ' ' || value_after as row
    from measurement_corrections order by observed_at`
  ).map((r) => r.row);

t.test('a delta holds exactly what imports wrote since the token; a re-import writes nothing', async (t) => {
  const f = await fixture(t);
  const day = rows(TUBE, '2024-01-01T00:00:00Z', 60);
  await load(f.sql, day);
  t.same(await changeRows(f.sql), [`${f.tube} 00:00-00:59`], 'direct path: one run for the tube');
  const first = await point(f.sql);

  t.same((await delta(f.sql, first, [f.tube, f.other])).rows, [], 'nothing since the token');
  const before = await point(f.sql);
  // Stored rows in range: the staging path; every row unchanged.
  t.same(await load(f.sql, day), { rows: 60, inserted: 0, updated: 0, unchanged: 60 });
  t.same(await changeRows(f.sql), [`${f.tube} 00:00-00:59`], 'a re-import records nothing');
  t.same((await delta(f.sql, before, [f.tube, f.other])).rows, [], 'and is no change');

  const next = rows(TUBE, '2024-01-01T01:00:00Z', 30, 60);
  const otherRows = rows(OTHER, '2024-01-01T00:00:00Z', 10, 0.5);
  await load(f.sql, next);
  await load(f.sql, otherRows);
  t.same(
    (await delta(f.sql, first, [f.other, f.tube])).rows,
    [...expected(0, otherRows), ...expected(1, next)],
    'both imports, in the order of the tube list, each row once',
  );
  t.same((await delta(f.sql, first, [f.tube])).rows, expected(0, next), 'only the tubes asked for');
  t.same(
    (await delta(f.sql, first, [f.tube], { from: '2024-01-01T01:10:00Z', to: '2024-01-01T01:20:00Z' })).rows,
    expected(0, next.slice(10, 20)),
    'only [from, to)',
  );
});

t.test('corrections: the rows given another value each a correction, new rows in runs', async (t) => {
  const f = await fixture(t);
  const day = rows(TUBE, '2024-01-01T00:00:00Z', 60);
  await load(f.sql, day);
  const token = await point(f.sql);
  const corrected = day.map((line, i) =>
    [10, 11, 12, 20, 40].includes(i) ? line.replace(/,\d+$/, ',-1') : line,
  );
  // Two new rows: inside the stored range (between 30 and 31 — instants differ by seconds), and after it.
  const added = [`${TUBE},2024-01-01T00:30:30.000Z,7`, `${TUBE},2024-01-01T02:00:00.000Z,8`];
  t.same(await load(f.sql, [...corrected, ...added]), { rows: 62, inserted: 2, updated: 5, unchanged: 55 });
  t.same(await changeRows(f.sql), [
    `${f.tube} 00:00-00:59`,
    `${f.tube} 00:30-00:30`,
    `${f.tube} 02:00-02:00`,
  ]);
  t.same(await correctionRows(f.sql), ['00:10 -1', '00:11 -1', '00:12 -1', '00:20 -1', '00:40 -1']);
  const want = [10, 11, 12, 20].map((i) => `0 ${new Date(Date.parse(FROM) + i * 60_000).toISOString()} -1`);
  t.same((await delta(f.sql, token, [f.tube])).rows, [
    ...want,
    '0 2024-01-01T00:30:30.000Z 7',
    '0 2024-01-01T00:40:00.000Z -1',
    '0 2024-01-01T02:00:00.000Z 8',
  ]);
});

t.test('the upsert records new rows as one run, corrected ones as corrections', async (t) => {
  const f = await fixture(t);
  const hour = rows(TUBE, '2024-01-01T00:00:00Z', 60);
  await load(f.sql, hour);
  // A readout repeating the last 30 stored rows unchanged, then 30 new ones.
  const readout = rows(TUBE, '2024-01-01T00:30:00Z', 60, 30);
  t.same(await load(f.sql, readout), { rows: 60, inserted: 30, updated: 0, unchanged: 30 });
  // Minutes 40 to 69 corrected, stored and new alike.
  const token = await point(f.sql);
  const corrected = rows(TUBE, '2024-01-01T00:40:00Z', 30, 0.5);
  t.same(await load(f.sql, corrected), { rows: 30, inserted: 0, updated: 30, unchanged: 0 });
  t.same(await changeRows(f.sql), [`${f.tube} 00:00-00:59`, `${f.tube} 01:00-01:29`]);
  t.equal((await correctionRows(f.sql)).length, 30, 'minutes 40 to 69, each a correction');
  t.same((await delta(f.sql, token, [f.tube])).rows, expected(0, corrected));
});

t.test('aggregated: every touched bucket, recomputed over all of its measurements', async (t) => {
  const f = await fixture(t);
  // Three hours of minutes; the token; then one correction in the second hour.
  const hours = rows(TUBE, '2024-01-01T00:00:00Z', 180);
  await load(f.sql, hours);
  const token = await point(f.sql);
  t.same((await delta(f.sql, token, [f.tube], { aggregateSeconds: 3600 })).rows, []);
  await load(f.sql, [hours[75]!.replace(/,\d+$/, ',1000')]);
  const bucketing = { bucketFunction: 'date_bin' as const, seconds: 3600 };
  const whole = await wholeBuckets(f.sql, f.tube, FROM, TO, bucketing);
  const hour = whole[1]!;
  t.equal(hour.count, '60');
  t.same((await delta(f.sql, token, [f.tube], { aggregateSeconds: 3600 })).rows, [bucketLine(0, hour)]);
  // A run over several buckets, cut by `from`: each bucket it reaches, counted within [from, to) only.
  const token2 = await point(f.sql);
  await load(f.sql, rows(TUBE, '2024-01-01T03:00:00Z', 150, 500));
  const from = '2024-01-01T03:30:00Z';
  const cut = await wholeBuckets(f.sql, f.tube, from, TO, bucketing);
  t.same(
    (await delta(f.sql, token2, [f.tube], { aggregateSeconds: 3600, from })).rows,
    cut.map((b) => bucketLine(0, b)),
  );
  t.same(
    cut.map((b) => b.count),
    ['60', '60'],
  );
});

t.test('410 when the key’s view changed, not for what it cannot see', async (t) => {
  const f = await fixture(t);
  await load(f.sql, rows(TUBE, '2024-01-01T00:00:00Z', 10));
  const granted: SyncViewer = { allTubes: false, grants: new Set([f.tube]) };
  const token = await point(f.sql, granted);
  const gone = async (viewer = granted) => (await delta(f.sql, token, [f.tube], { viewer })).gone;

  t.equal(await gone(), false, 'nothing changed');
  await f.sql`update tubes set unit = 'cm' where id = ${f.other}`;
  await f.sql`update wells set name = 'W2b' where name = 'W2'`;
  t.equal(await gone(), false, 'a tube and a well it cannot read changed');
  t.equal(await gone({ allTubes: true, grants: new Set() }), true, 'all tubes: another tube');
  t.equal(await gone({ allTubes: false, grants: new Set([f.tube, f.other]) }), true, 'a grant');
  t.equal(await gone({ allTubes: false, grants: new Set() }), true, 'a revocation');

  await f.sql`update wells set name = 'W1b' where name = 'W1'`;
  t.equal(await gone(), true, 'its well renamed');
  await f.sql`update wells set name = 'W1' where name = 'W1b'`;
  t.equal(await gone(), false, 'and back: the same view again');
  await f.sql`update tubes set unit = 'cm' where id = ${f.tube}`;
  t.equal(await gone(), true, 'its unit');
  await f.sql`update tubes set unit = 'm', vertical_datum = 'MSL' where id = ${f.tube}`;
  t.equal(await gone(), true, 'its vertical datum');
  await f.sql`update tubes set vertical_datum = 'NAP', number = '9' where id = ${f.tube}`;
  t.equal(await gone(), true, 'its number');
  await f.sql`update tubes set number = '1' where id = ${f.tube}`;
  t.equal(await gone(), false, 'all back');
});

t.test('410 once the history a token needs is pruned', async (t) => {
  const f = await fixture(t);
  await load(f.sql, rows(TUBE, '2024-01-01T00:00:00Z', 10));
  const old = await point(f.sql);
  await load(f.sql, rows(TUBE, '2024-01-01T01:00:00Z', 10));
  const recent = await point(f.sql);
  await load(f.sql, rows(TUBE, '2024-01-01T02:00:00Z', 10));
  t.equal(await pruneChangeLog(f.sql, 30), 0, 'nothing is older than 30 days');
  t.equal((await delta(f.sql, old, [f.tube])).rows.length, 20);
  // The first two imports happened 40 days ago.
  await f.sql`
    update measurement_changes set recorded_at = now() - interval '40 days'
    where xid < (select max(xid) from measurement_changes)`;
  t.equal(await pruneChangeLog(f.sql, 30), 2);
  t.equal((await delta(f.sql, old, [f.tube])).gone, true, 'a token from before the pruned history');
  t.same(
    await delta(f.sql, recent, [f.tube]),
    { gone: false, rows: expected(0, rows(TUBE, '2024-01-01T02:00:00Z', 10)) },
    'a token that saw every pruned import: still exact',
  );
  const after = await point(f.sql);
  await load(f.sql, rows(TUBE, '2024-01-01T03:00:00Z', 10));
  t.same((await delta(f.sql, after, [f.tube])).rows.length, 10, 'a token from after it: still exact');
});

t.test('tokens: issued for a key, read back only for that key and unaltered', async (t) => {
  const f = await fixture(t);
  const secret = await loadSyncSecret(f.sql);
  t.ok(secret.length >= 32);
  const p = await point(f.sql);
  const token = issueSyncToken(p, 'key-a', secret);
  t.match(token, /^[A-Za-z0-9_-]{1,200}$/);
  const { history: _history, ...issued } = p;
  t.same(readSyncToken(token, 'key-a', secret), issued);
  t.equal(readSyncToken(token, 'key-b', secret), undefined);
  // A snapshot this database has not reached (a backup restored, a replica behind): what it counts as
  // seen may be yet to come.
  const ahead = { ...p, xmin: p.xmax + 5n, xmax: p.xmax + 10n, xip: [] };
  t.equal((await delta(f.sql, ahead, [f.tube])).gone, true, 'a token ahead of the database');
  t.equal((await delta(f.sql, p, [f.tube])).gone, false);
});

t.test('an import that commits after a token, though it began before a later one that did not', async (t) => {
  const f = await fixture(t);
  const importerA = connect(f.url, { max: 1, applicationName: 'sync test import A' });
  t.teardown(() => importerA.end());
  const aRows = rows(TUBE, '2024-01-01T00:00:00Z', 100);
  const bRows = rows(OTHER, '2024-01-01T00:00:00Z', 100, 0.5);
  const secret = await loadSyncSecret(f.sql);
  const before = await point(f.sql);

  // 1. A starts, locks its tube and writes its first rows, and holds its transaction open.
  const a = heldImport(importerA, aRows);
  await a.holding;
  const [aXid] = await f.sql<{ xid: string | null }[]>`
    select backend_xid::text as xid from pg_stat_activity where application_name = 'sync test import A'`;
  t.ok(aXid?.xid, 'A has an xid: it has begun writing');
  // 2. B starts later, writes and commits.
  t.same(await load(f.sql, bRows), { rows: 100, inserted: 100, updated: 0, unchanged: 0 });
  // 3. A response is read: its token, and the naive token (the largest revision its snapshot saw).
  const { token, naive } = await snapshotRead(f.sql, async (tx) => {
    const p = await currentSyncPoint(tx, ALL);
    const [seen] = await tx<{ max: string }[]>`select max(xid)::text as max from measurement_changes`;
    return { token: issueSyncToken(p, 'key', secret), naive: seen!.max };
  });
  // 4. A commits.
  a.release();
  t.same(await a.done, { rows: 100, inserted: 100, updated: 0, unchanged: 0 });
  const [aLogged] = await f.sql<{ xid: string }[]>`
    select xid::text from measurement_changes where tube_id = ${f.tube}`;
  t.equal(aLogged?.xid, aXid?.xid, "A's change rows carry A's xid");

  const since = readSyncToken(token, 'key', secret)!;
  t.same((await delta(f.sql, since, [f.tube, f.other])).rows, expected(0, aRows), "A's rows, none of B's");
  t.same(
    (await delta(f.sql, before, [f.tube, f.other])).rows,
    [...expected(0, aRows), ...expected(1, bRows)],
    'since before both: both',
  );

  // The control: a token holding the largest revision (xid) seen misses A, whose xid is below B's.
  const naiveRows = await f.sql<{ tube_id: number }[]>`
    select distinct c.tube_id from measurement_changes c where c.xid > ${naive}::xid8`;
  t.same(naiveRows, [], 'the naive token misses A: this test fails on that design');
});

t.test('imports of the same tube take turns: no run holds the other import’s rows', async (t) => {
  const f = await fixture(t);
  const importerA = connect(f.url, { max: 1, applicationName: 'sync test import A' });
  const importerB = connect(f.url, { max: 1, applicationName: 'sync test import B' });
  t.teardown(() => Promise.all([importerA.end(), importerB.end()]));
  const aRows = rows(TUBE, '2024-01-01T00:00:00Z', 100);
  // Between A's instants: with both on the direct path at once, each would claim a run over the other's.
  const bRows = rows(TUBE, '2024-01-01T00:00:30Z', 3).map((line, i) => line.replace(/,\d+$/, `,${i + 0.5}`));
  const before = await point(f.sql);

  const a = heldImport(importerA, aRows);
  await a.holding;
  const b = load(importerB, bRows);
  // B's direct path finds the tube locked and gives way; its staging path waits for A's commit.
  await until(
    'B waits for the tube',
    () => f.sql`select wait_event_type from pg_stat_activity where application_name = 'sync test import B'`,
    (found) => found[0]?.wait_event_type === 'Lock',
  );
  a.release();
  await a.done;
  t.same(await b, { rows: 3, inserted: 3, updated: 0, unchanged: 0 });
  t.same(
    await changeRows(f.sql),
    [`${f.tube} 00:00-01:39`, `${f.tube} 00:00-00:00`, `${f.tube} 00:01-00:01`, `${f.tube} 00:02-00:02`],
    "B's rows are single runs between A's rows",
  );
  t.same(
    (await delta(f.sql, before, [f.tube])).rows,
    expected(0, [...aRows, ...bRows].sort()),
    'both imports, each row once, in time order',
  );
});

t.test(
  'any order of commits and tokens: each delta holds exactly the imports committed after it',
  async (t) => {
    const f = await fixture(t);
    const identifiers = Array.from({ length: 4 }, (_, i) => `7c1e5a52-0000-4000-8000-00000000000${i}`);
    await upsertRegistry(f.sql, [
      { name: 'W3', tubes: identifiers.map((identifier, i) => ({ identifier, number: `${i}` })) },
    ]);
    const ids = (
      await f.sql<
        { id: number }[]
      >`select id from tubes where identifier = any(${identifiers}::uuid[]) order by identifier`
    ).map((r) => r.id);
    const importers = identifiers.map(() => connect(f.url, { max: 1 }));
    t.teardown(() => Promise.all(importers.map((sql) => sql.end())));
    const random = seededRandom(23);
    for (let schedule = 0; schedule < 6; schedule++) {
      // All four start (in this order) and write; then commits in a random order, tokens between them.
      const day = `2024-01-${String(schedule + 1).padStart(2, '0')}T00:00:00Z`;
      const lines = identifiers.map((identifier, i) => rows(identifier, day, 20, i * 100 + schedule));
      const imports = [];
      for (const [i, sql] of importers.entries()) {
        const held = heldImport(sql, lines[i]!);
        await held.holding;
        imports.push(held);
      }
      const order = [0, 1, 2, 3].sort(() => random() - 0.5);
      const tokens: { point: SyncPoint; committedBefore: number[] }[] = [
        { point: await point(f.sql), committedBefore: [] },
      ];
      const committed: number[] = [];
      for (const i of order) {
        imports[i]!.release();
        await imports[i]!.done;
        committed.push(i);
        if (random() < 0.6) tokens.push({ point: await point(f.sql), committedBefore: [...committed] });
      }
      for (const { point: since, committedBefore } of tokens) {
        const after = [0, 1, 2, 3].filter((i) => !committedBefore.includes(i));
        t.same(
          (await delta(f.sql, since, ids)).rows,
          after.flatMap((i) => expected(i, lines[i]!)),
          `schedule ${schedule}, commits ${order.join(' ')}, token after ${committedBefore.length}`,
        );
      }
    }
  },
);

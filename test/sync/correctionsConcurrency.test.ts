/**
 * Corrections under concurrency, the interleaving forced: a status change, and a removal, whose
 * transaction began (and took its xid) before another writer's, stays open while that writer commits
 * and a token is read, then commits. A delta since that token must hold the correction. The control:
 * a token that keeps the largest xid its snapshot saw counts the open writer as seen, and misses it.
 */
import t, { type Test } from 'tap';
import { connect, type Sql } from '../../src/db/connect.js';
import { parseInstant } from '../../src/domain/datetime.js';
import { removeMeasurements, setStatus } from '../../src/importers/measurements/corrections.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { changedMeasurementsSelect, deltaRefusal, REMOVED_CODE } from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';
import { freshDatabase } from '../helpers/database.js';
import { minuteRows, OTHER, rowImporter, TUBE } from '../helpers/importFixtures.js';
import { point, snapshotRead } from '../helpers/sync.js';
import { until } from '../helpers/until.js';

const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-02-01T00:00:00Z';
const WHOLE = { from: parseInstant(FROM), to: parseInstant(TO) };
const WRITER = 'corrections test writer';

async function fixture(t: Test) {
  const { sql, url } = await freshDatabase(t);
  await upsertRegistry(sql, [
    { name: 'W1', tubes: [{ identifier: TUBE, number: '1' }] },
    { name: 'W2', tubes: [{ identifier: OTHER, number: '1' }] },
  ]);
  const importRows = rowImporter(sql);
  const split = (lines: string[]) => lines.map((line) => line.split(',') as [string, string, string]);
  await importRows(split(minuteRows(TUBE, FROM, 10)));
  await importRows(split(minuteRows(OTHER, FROM, 10)));
  const ids = await sql<{ id: number }[]>`select id from tubes order by identifier`;
  const writer = connect(url, { max: 1, applicationName: WRITER });
  t.teardown(() => writer.end());
  return { sql, writer, importRows, split, tube: ids[0]!.id, other: ids[1]!.id };
}

/** Holds the lock of a latest_measurements entry, which the writer meets only after all its writes. */
async function holdLatest(sql: Sql, tube: number, status: number) {
  const session = await sql.reserve();
  await session.unsafe('begin');
  await session`select from latest_measurements where tube_id = ${tube} and status = ${status} for update`;
  return async () => {
    await session.unsafe('rollback');
    session.release();
  };
}

/** The delta rows since `since` for tubes `tubeIds`, with their statuses; 'gone' for a 410. */
const delta = (sql: Sql, since: SyncPoint, tubeIds: number[], statuses?: number[], withStatus = true) =>
  snapshotRead(sql, async (tx) => {
    const request = { tubeIds, from: FROM, to: TO, since, statuses, withStatus };
    if (await deltaRefusal(tx, request)) return 'gone' as const;
    const rows = await tx.unsafe<{ tube: number; observed_at: Date; status?: number }[]>(
      changedMeasurementsSelect(request),
    );
    return rows.map((row) => `${row.tube} ${row.observed_at.toISOString()} ${row.status ?? ''}`.trim());
  });

const lines = (tube: number, status: number | string) =>
  minuteRows(TUBE, FROM, 10).map(
    (line) => `${tube} ${new Date(line.split(',')[1]!).toISOString()} ${status}`,
  );

/**
 * The interleaving: `correct` starts, writes, and waits at its last step; another import commits; the
 * token is read (with the control's largest xid); then `correct` commits.
 */
async function interleaved(
  t: Test,
  f: Awaited<ReturnType<typeof fixture>>,
  correct: () => Promise<number>,
  heldStatus: number,
) {
  const release = await holdLatest(f.sql, f.tube, heldStatus);
  const correcting = correct();
  await until(
    'the correction waits at its last step',
    () => f.sql`select wait_event_type from pg_stat_activity where application_name = ${WRITER}`,
    (rows) => rows[0]?.wait_event_type === 'Lock',
  );
  const [open] = await f.sql<{ xid: string }[]>`
    select backend_xid::text as xid from pg_stat_activity where application_name = ${WRITER}`;
  await f.importRows(f.split(minuteRows(OTHER, '2024-01-02T00:00:00Z', 3)));
  const token = await point(f.sql);
  const [seen] = await snapshotRead(
    f.sql,
    (tx) => tx<{ max: string }[]>`select max(xid::text::bigint)::text as max from measurement_changes`,
  );
  t.ok(
    BigInt(open!.xid) < BigInt(seen!.max),
    'the correction took its xid before the import that committed first',
  );
  await release();
  const changed = await correcting;
  t.equal(changed, 10, 'the correction changed the tube’s ten rows');
  const naive = await f.sql`
    select from measurement_corrections where xid::text::bigint > ${seen!.max}::bigint`;
  t.equal(naive.length, 0, 'the control: a token of the largest xid seen misses the correction');
  return token;
}

t.test('a status change that commits after a token, though it began before', async (t) => {
  const f = await fixture(t);
  const token = await interleaved(t, f, () => setStatus(f.writer, [TUBE], WHOLE, 'approved'), 1);
  t.same(await delta(f.sql, token, [f.tube]), lines(0, 0), 'include=status: the ten rows, approved');
  t.same(await delta(f.sql, token, [f.tube], [0]), lines(0, 0), 'status=approved: the ten rows');
  t.same(
    await delta(f.sql, token, [f.tube], [1]),
    lines(0, REMOVED_CODE),
    'status=provisional: the ten rows left the view, each a removal',
  );
  t.equal(await delta(f.sql, token, [f.tube], [1], false), 'gone', 'without include=status: 410');
  t.same(await delta(f.sql, token, [f.tube], [2], false), [], 'status=rejected: never held, no 410');
});

t.test('a removal that commits after a token, though it began before', async (t) => {
  const f = await fixture(t);
  const token = await interleaved(t, f, () => removeMeasurements(f.writer, TUBE, WHOLE), 1);
  t.same(await delta(f.sql, token, [f.tube]), lines(0, REMOVED_CODE), 'include=status: ten removals');
  t.equal(await delta(f.sql, token, [f.tube], undefined, false), 'gone', 'without include=status: 410');
  t.same(await delta(f.sql, token, [f.tube], [0]), [], 'status=approved: it never held them');
});

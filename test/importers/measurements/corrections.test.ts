/**
 * The operator's corrections (src/importers/measurements/corrections.ts) on plain PostgreSQL: what a
 * status change and a removal store and record, refusals that change nothing, a property test of random
 * imports and corrections against a model (the stored rows, the latest per tube and status, and each
 * writer's runs of inserted rows and its corrections, exactly), and the order of two writers of one tube.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import { type Instant, parseDateTime } from '../../../src/domain/datetime.js';
import { STATUSES, type Status } from '../../../src/domain/status.js';
import { pruneChangeLog } from '../../../src/importers/measurements/changeLog.js';
import {
  type Interval,
  removeMeasurements,
  setStatus,
  type Tubes,
} from '../../../src/importers/measurements/corrections.js';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { heldImport, OTHER, registeredDatabase, TUBE } from '../../helpers/importFixtures.js';
import { seededRandom } from '../../helpers/random.js';
import { until } from '../../helpers/until.js';

const UNKNOWN = '99999999-2fa1-11d2-883f-0016d3cca427';
const MINUTE_ZERO = Date.UTC(2024, 0, 1);
const at = (minute: number) => new Date(MINUTE_ZERO + minute * 60_000).toISOString();
const instant = (minute: number): Instant => (parseDateTime(at(minute)) as { instant: Instant }).instant;
const minutes = (from: number, to: number): Interval => ({ from: instant(from), to: instant(to) });

function importCsv(sql: Sql, rows: string[], withStatus: boolean) {
  const header = `tubeIdentifier,observedAt,value${withStatus ? ',status' : ''}`;
  const csv = `${header}\n${rows.join('\n')}\n`;
  return importMeasurements(sql, Readable.from([Buffer.from(csv)]), { name: 'data.csv' });
}

/** Every stored row as "tube minute value status", the tube by its identifier. */
async function stored(sql: Sql): Promise<string[]> {
  const rows = await sql<{ row: string }[]>`
    select t.identifier || ' ' || (extract(epoch from m.observed_at - ${at(0)}::timestamptz) / 60)::int || ' ' ||
           measurement_value(m.value, m.value_thousandths) || ' ' || m.status as row
    from measurements m join tubes t on t.id = m.tube_id order by t.identifier, m.observed_at`;
  return rows.map((r) => r.row);
}

interface Written {
  runs: { tube: string; first: number; last: number }[];
  /** "tube minute value status -> value status", or "-> removed". */
  corrections: string[];
}

/**
 * The runs of inserted rows and the corrections written after change order `after`, and the largest
 * order now. (Runs marked corrected, kept for the release before, repeat the corrections.)
 */
async function writtenSince(sql: Sql, after: number): Promise<Written & { order: number }> {
  const runs = await sql<{ tube: string; first: number; last: number }[]>`
    select t.identifier::text as tube,
           (extract(epoch from c.first_at - ${at(0)}::timestamptz) / 60)::int as first,
           (extract(epoch from c.last_at - ${at(0)}::timestamptz) / 60)::int as last
    from measurement_changes c join tubes t on t.id = c.tube_id
    where c.change_order > ${after} and not c.corrected
    order by 1, 2`;
  const corrections = await sql<{ row: string }[]>`
    select t.identifier || ' ' || (extract(epoch from c.observed_at - ${at(0)}::timestamptz) / 60)::int || ' ' ||
           c.value_before || ' ' || c.status_before || ' -> ' ||
           coalesce(c.value_after || ' ' || c.status_after, 'removed') as row
    from measurement_corrections c join tubes t on t.id = c.tube_id where c.change_order > ${after}
    order by t.identifier, c.observed_at`;
  const [last] = await sql<{ order: string }[]>`
    select greatest((select max(change_order) from measurement_changes),
                    (select max(change_order) from measurement_corrections), 0) as order`;
  return { runs, corrections: corrections.map((r) => r.row), order: Number(last?.order) };
}

const versions = async (sql: Sql) =>
  (await sql<{ v: string }[]>`select series_version as v from tubes order by identifier`).map((r) =>
    Number(r.v),
  );

t.test('a status change: only rows with another status, each a correction', async (t) => {
  const sql = await registeredDatabase(t);
  await importCsv(
    sql,
    [0, 1, 2, 3, 4].map((m) => `${TUBE},${at(m)},${m},provisional`),
    true,
  );
  await importCsv(sql, [`${OTHER},${at(2)},7,approved`], true);
  await setStatus(sql, [TUBE], minutes(2, 3), 'approved');
  const { order } = await writtenSince(sql, 0);
  const before = await versions(sql);

  t.equal(await setStatus(sql, [TUBE, OTHER], minutes(1, 4), 'approved'), 2, 'minutes 1 and 3 of TUBE');
  t.same(await writtenSince(sql, order), {
    // Minute 2 already was approved and stays out. Nothing was inserted: no run.
    runs: [],
    corrections: [`${TUBE} 1 1 1 -> 1 0`, `${TUBE} 3 3 1 -> 3 0`],
    order: order + 1,
  });
  t.same(await versions(sql), [before[0]! + 1, before[1]!], 'only the changed tube has a new series version');
  t.equal(
    await setStatus(sql, [TUBE, OTHER], minutes(1, 4), 'approved'),
    0,
    'the same again changes nothing',
  );
  t.equal((await writtenSince(sql, order + 1)).order, order + 1, 'and records nothing');
  t.same(await versions(sql), [before[0]! + 1, before[1]!]);

  t.equal(await setStatus(sql, 'all', minutes(0, 5), 'rejected'), 6, '--all-tubes: every tube');
  t.same((await writtenSince(sql, order + 1)).corrections, [
    ...[0, 1, 2, 3, 4].map((m) => `${TUBE} ${m} ${m} ${m === 0 || m === 4 ? 1 : 0} -> ${m} 2`),
    `${OTHER} 2 7 0 -> 7 2`,
  ]);
  t.same(await sql`select status, count(*)::int from latest_measurements group by 1`, [
    { status: 2, count: 2 },
  ]);
});

t.test('a removal: its corrections, no run, a new series version, latest recomputed', async (t) => {
  const sql = await registeredDatabase(t);
  await importCsv(
    sql,
    [0, 1, 2, 3].map((m) => `${TUBE},${at(m)},${m},${m % 2 ? 'approved' : 'provisional'}`),
    true,
  );
  const { order } = await writtenSince(sql, 0);
  const before = await versions(sql);
  t.equal(await removeMeasurements(sql, TUBE, minutes(1, 3)), 2);
  t.same(await writtenSince(sql, order), {
    runs: [],
    corrections: [`${TUBE} 1 1 0 -> removed`, `${TUBE} 2 2 1 -> removed`],
    order: order + 1,
  });
  t.same(await stored(sql), [`${TUBE} 0 0 1`, `${TUBE} 3 3 0`]);
  t.same(await versions(sql), [before[0]! + 1, before[1]!]);
  t.same(
    await sql`select status, extract(epoch from observed_at - ${at(0)}::timestamptz)::int / 60 as minute
              from latest_measurements order by status`,
    [
      { status: 0, minute: 3 },
      { status: 1, minute: 0 },
    ],
  );
  t.equal(await removeMeasurements(sql, TUBE, minutes(1, 3)), 0, 'nothing left to remove');
  t.same(await versions(sql), [before[0]! + 1, before[1]!], 'and no new series version');
});

t.test('an unknown tube is refused by name and nothing changes', async (t) => {
  const sql = await registeredDatabase(t);
  await importCsv(sql, [`${TUBE},${at(0)},1`], false);
  const rows = await stored(sql);
  const history = await writtenSince(sql, 0);
  await t.rejects(setStatus(sql, [TUBE, UNKNOWN], minutes(0, 1), 'approved'), {
    name: 'UserError',
    message: `unknown tube identifier: ${UNKNOWN}`,
  });
  await t.rejects(removeMeasurements(sql, UNKNOWN, minutes(0, 1)), {
    message: `unknown tube identifier: ${UNKNOWN}`,
  });
  t.same(await stored(sql), rows);
  t.same(await writtenSince(sql, 0), history);
});

/** The model of the stored rows: "tube minute" → value and status code. */
type Model = Map<string, { value: number; status: number }>;

function modelRows(model: Model): string[] {
  return [...model]
    .map(([key, row]) => {
      const [tube, minute] = key.split(' ');
      return { tube: tube!, minute: Number(minute), line: `${key} ${row.value} ${row.status}` };
    })
    .sort((a, b) => (a.tube === b.tube ? a.minute - b.minute : a.tube < b.tube ? -1 : 1))
    .map((r) => r.line);
}

t.test('random imports and corrections: rows, latest, runs and corrections as a model says', async (t) => {
  const sql = await registeredDatabase(t);
  const random = seededRandom(29);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const TUBES = [TUBE, OTHER];
  const MINUTES = 12;
  const model: Model = new Map();
  let order = 0;
  for (let step = 0; step < 80; step++) {
    const before = new Map(model);
    const kind = pick(['import', 'import', 'status', 'remove']);
    let what: string;
    if (kind === 'import') {
      const withStatus = random() < 0.6;
      const keys = new Set<string>();
      const rows: string[] = [];
      for (let n = 1 + Math.floor(random() * 6); n > 0; n--) {
        const tube = pick(TUBES);
        const minute = Math.floor(random() * MINUTES);
        if (keys.has(`${tube} ${minute}`)) continue;
        keys.add(`${tube} ${minute}`);
        const value = pick([1, 2, 3]);
        const status = pick(STATUSES);
        rows.push(`${tube},${at(minute)},${value}${withStatus ? `,${status}` : ''}`);
        const old = model.get(`${tube} ${minute}`);
        const code = withStatus ? STATUSES.indexOf(status) : (old?.status ?? 1);
        model.set(`${tube} ${minute}`, { value, status: code });
      }
      // In time order half of the time, so that new series take the direct path.
      if (random() < 0.5) rows.sort((a, b) => (a.split(',')[1]! < b.split(',')[1]! ? -1 : 1));
      what = `import ${rows.join(' ')}`;
      await importCsv(sql, rows, withStatus);
    } else {
      const from = Math.floor(random() * MINUTES);
      const to = from + 1 + Math.floor(random() * (MINUTES - from));
      if (kind === 'status') {
        const status: Status = pick(STATUSES);
        const tubes: Tubes = pick(['all', [TUBE], [OTHER], TUBES] as const);
        const code = STATUSES.indexOf(status);
        let changed = 0;
        for (const [key, row] of model) {
          const [tube, minute] = key.split(' ');
          if ((tubes === 'all' || tubes.includes(tube!)) && Number(minute) >= from && Number(minute) < to) {
            if (row.status !== code) changed++;
            model.set(key, { ...row, status: code });
          }
        }
        what = `status ${status} ${tubes} [${from}, ${to})`;
        t.equal(await setStatus(sql, tubes, minutes(from, to), status), changed, what);
      } else {
        const tube = pick(TUBES);
        let removed = 0;
        for (const key of [...model.keys()]) {
          const [keyTube, minute] = key.split(' ');
          if (keyTube === tube && Number(minute) >= from && Number(minute) < to) {
            model.delete(key);
            removed++;
          }
        }
        what = `remove ${tube} [${from}, ${to})`;
        t.equal(await removeMeasurements(sql, tube, minutes(from, to)), removed, what);
      }
    }
    t.same(await stored(sql), modelRows(model), `step ${step}: ${what}`);

    // Exactly the corrected rows are recorded, both versions, and the runs cover the inserted rows and
    // no other stored row.
    const written = await writtenSince(sql, order);
    const insertedKeys = [...model.keys()].filter((key) => !before.has(key));
    const corrected = [...before.keys()].filter((key) => {
      const now = model.get(key);
      const old = before.get(key)!;
      return !now || now.value !== old.value || now.status !== old.status;
    });
    const correctionLines = modelRows(new Map(corrected.map((key) => [key, before.get(key)!]))).map(
      (line) => {
        const now = model.get(line.split(' ').slice(0, 2).join(' '));
        return `${line} -> ${now ? `${now.value} ${now.status}` : 'removed'}`;
      },
    );
    t.same(written.corrections, correctionLines, `${what}: corrections`);
    const inRun = (key: string) => {
      const [tube, minute] = key.split(' ');
      return written.runs.some(
        (r) => r.tube === tube && r.first <= Number(minute) && Number(minute) <= r.last,
      );
    };
    t.same(
      insertedKeys.filter((key) => !inRun(key)),
      [],
      `${what}: every inserted row in a run`,
    );
    t.same(
      [...model.keys()].filter((key) => inRun(key) && !insertedKeys.includes(key)),
      [],
      `${what}: no other row in a run`,
    );
    order = written.order;

    const latest = await sql<{ row: string }[]>`
      select t.identifier || ' ' || l.status || ' ' ||
             (extract(epoch from l.observed_at - ${at(0)}::timestamptz) / 60)::int || ' ' || l.value as row
      from latest_measurements l join tubes t on t.id = l.tube_id order by 1`;
    const expected = new Map<string, string>();
    for (const line of modelRows(model)) {
      const [tube, minute, value, status] = line.split(' ');
      expected.set(`${tube} ${status}`, `${tube} ${status} ${minute} ${value}`);
    }
    t.same(
      latest.map((r) => r.row),
      [...expected.values()].sort(),
      `${what}: latest per tube and status`,
    );
  }
});

/** The change order and xid each of the last writes recorded, oldest first. */
async function writers(sql: Sql) {
  return await sql<{ order: string; xid: string }[]>`
    select change_order as order, xid::text as xid
    from (select change_order, xid from measurement_changes
          union select change_order, xid from measurement_corrections) w
    order by change_order`;
}

const waitingForLock = (sql: Sql) =>
  until(
    'a writer waits for a tube lock',
    async () => (await sql`select from pg_locks where not granted`).length,
    (n) => n > 0,
  );

t.test('two writers of one tube: the later to commit has the larger change order', async (t) => {
  const sql = await registeredDatabase(t);
  // An import holds its tube; a status change waits for it, then takes every row, the import's too.
  const held = heldImport(
    sql,
    [0, 1, 2, 3].map((m) => `${TUBE},${at(m)},${m}`),
  );
  await held.holding;
  const status = setStatus(sql, [TUBE], minutes(0, 10), 'approved');
  await waitingForLock(sql);
  held.release();
  await held.done;
  t.equal(await status, 4, 'the status change saw the import it waited for');
  const [imported, corrected] = await writers(sql);
  t.ok(BigInt(imported!.xid) < BigInt(corrected!.xid));

  // An import that began (and took its xid) first but reaches the tube's lock after a removal committed.
  const before = (await writers(sql)).length;
  const late = heldImport(
    sql,
    [2, 3, 4, 5].map((m) => `${TUBE},${at(m)},${m + 10}`),
  );
  await late.holding;
  t.equal(await removeMeasurements(sql, TUBE, minutes(0, 1)), 1);
  late.release();
  t.same(await late.done, { rows: 4, inserted: 2, updated: 2, unchanged: 0 });
  const [removal, reimport] = (await writers(sql)).slice(before);
  t.ok(BigInt(reimport!.xid) < BigInt(removal!.xid), 'the import took its xid before the removal');
  t.ok(Number(reimport!.order) > Number(removal!.order), 'and committed after it: a larger order');
  t.same(await stored(sql), [
    `${TUBE} 1 1 0`,
    `${TUBE} 2 12 0`,
    `${TUBE} 3 13 0`,
    `${TUBE} 4 14 1`,
    `${TUBE} 5 15 1`,
  ]);
});

t.test('pruning deletes old corrections with old runs and raises the horizon over both', async (t) => {
  const sql = await registeredDatabase(t);
  await importCsv(
    sql,
    [0, 1, 2].map((m) => `${TUBE},${at(m)},${m}`),
    false,
  );
  await setStatus(sql, [TUBE], minutes(0, 2), 'approved');
  await removeMeasurements(sql, TUBE, minutes(2, 3));
  const xids = async (table: 'measurement_changes' | 'measurement_corrections') =>
    (await sql.unsafe(`select distinct xid::text as xid from ${table} order by 1`)).map((r) => BigInt(r.xid));
  const [imported] = await xids('measurement_changes');
  const [corrected, removed] = await xids('measurement_corrections');
  t.ok(imported! < corrected! && corrected! < removed!);
  const horizon = async () =>
    BigInt((await sql`select pruned_through::text as xid from sync_state`)[0]!.xid as string);

  t.equal(await pruneChangeLog(sql, 30), 0, 'nothing is older than 30 days');
  t.equal(await horizon(), 0n);
  // The import and the status change were 40 days ago, the removal is recent.
  await sql`update measurement_changes set recorded_at = now() - interval '40 days'`;
  await sql`update measurement_corrections set recorded_at = now() - interval '40 days' where xid::text = ${String(corrected)}`;
  t.equal(await pruneChangeLog(sql, 30), 3, 'the run and the two corrections of the status change');
  t.equal(
    await horizon(),
    corrected,
    "the horizon is the status change's, the newest pruned, from corrections",
  );
  t.same(await xids('measurement_changes'), []);
  t.same(await xids('measurement_corrections'), [removed]);
});

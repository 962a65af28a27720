/**
 * The status column of the measurements import on both paths: what is stored, what counts as changed,
 * the change rows and corrections each import writes (exactly those), the series versions, the latest
 * measurements, and the refusals of a bad status.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import type { ImportInput } from '../../../src/importers/measurements/importInput.js';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { OTHER, registeredDatabase, TUBE } from '../../helpers/importFixtures.js';

const WITH_STATUS = 'tubeIdentifier,observedAt,value,status\n';
const WITHOUT = 'tubeIdentifier,observedAt,value\n';

/** A re-readable input that counts its readings: 1 is the direct path, 2 the staging path. */
async function imported(sql: Sql, csv: string): Promise<string> {
  let readings = 0;
  const input: ImportInput = {
    full: false,
    async *read() {
      readings++;
      yield Buffer.from(csv);
    },
    async close() {},
  };
  const r = await importMeasurements(sql, input, { name: 'data.csv' });
  return `${r.inserted} inserted, ${r.updated} updated, ${r.unchanged} unchanged; read ${readings}x`;
}

async function rejection(sql: Sql, csv: string): Promise<string[]> {
  const error = await importMeasurements(sql, Readable.from([Buffer.from(csv)]), { name: 'data.csv' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ImportRejected)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error.report().trimEnd().split('\n');
}

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();
const hhmm = `'HH24:MI'`;

/** The stored rows as "tube-number HH:MI value status". */
async function stored(sql: Sql): Promise<string[]> {
  const rows = await sql<{ row: string }[]>`
    select t.number || ' ' || to_char(m.observed_at at time zone 'UTC', ${sql.unsafe(hhmm)}) || ' ' ||
           measurement_value(m.value, m.value_thousandths) || ' ' || m.status as row
    from measurements m join tubes t on t.id = m.tube_id order by t.number, m.observed_at`;
  return rows.map((r) => r.row);
}

/** The last writer's change order. */
const LAST_ORDER = `
  select max(change_order) from (select change_order from measurement_changes
                                 union all select change_order from measurement_corrections) o`;

/** What the last writer recorded: its runs and its corrections' versions before, as "tube-number HH:MI…". */
async function lastWrite(sql: Sql): Promise<{ runs: string[]; prior: string[] }> {
  const runs = await sql<{ row: string }[]>`
    select t.number || ' ' || to_char(c.first_at at time zone 'UTC', ${sql.unsafe(hhmm)}) || '-' ||
           to_char(c.last_at at time zone 'UTC', ${sql.unsafe(hhmm)}) as row
    from measurement_changes c join tubes t on t.id = c.tube_id
    where not c.corrected and c.change_order = (${sql.unsafe(LAST_ORDER)}) order by 1`;
  const prior = await sql<{ row: string }[]>`
    select t.number || ' ' || to_char(p.observed_at at time zone 'UTC', ${sql.unsafe(hhmm)}) || ' ' ||
           p.value_before || ' ' || p.status_before as row
    from measurement_corrections p join tubes t on t.id = p.tube_id
    where p.change_order = (${sql.unsafe(LAST_ORDER)}) order by 1`;
  return { runs: runs.map((r) => r.row), prior: prior.map((r) => r.row) };
}

async function latest(sql: Sql): Promise<string[]> {
  const rows = await sql<{ row: string }[]>`
    select t.number || ' ' || l.status || ' ' || to_char(l.observed_at at time zone 'UTC', ${sql.unsafe(hhmm)}) ||
           ' ' || l.value as row
    from latest_measurements l join tubes t on t.id = l.tube_id order by 1`;
  return rows.map((r) => r.row);
}

async function seriesVersions(sql: Sql): Promise<number[]> {
  const rows = await sql<{ version: string }[]>`select series_version as version from tubes order by number`;
  return rows.map((r) => Number(r.version));
}

const historyCounts = async (sql: Sql) => {
  const [row] = await sql<{ changes: string; prior: string }[]>`
    select (select count(*) from measurement_changes) as changes,
           (select count(*) from measurement_corrections) as prior`;
  return [Number(row?.changes), Number(row?.prior)];
};

t.test('a new series with statuses: the direct path stores each status; latest per status', async (t) => {
  const sql = await registeredDatabase(t);
  const csv =
    `${WITH_STATUS}${TUBE},${at(0)},1,approved\n${TUBE},${at(1)},2,provisional\n` +
    `${TUBE},${at(2)},3,rejected\n${TUBE},${at(3)},4,approved\n${OTHER},${at(0)},5,"provisional"\n`;
  t.equal(await imported(sql, csv), '5 inserted, 0 updated, 0 unchanged; read 1x');
  t.same(await stored(sql), ['1 00:00 1 0', '1 00:01 2 1', '1 00:02 3 2', '1 00:03 4 0', '2 00:00 5 1']);
  t.same(await lastWrite(sql), { runs: ['1 00:00-00:03', '2 00:00-00:00'], prior: [] });
  t.same(await latest(sql), ['1 0 00:03 4', '1 1 00:01 2', '1 2 00:02 3', '2 1 00:00 5']);
});

t.test('without the column: new rows provisional, stored rows keep their status', async (t) => {
  const sql = await registeredDatabase(t);
  await imported(sql, `${WITH_STATUS}${TUBE},${at(0)},1,approved\n${TUBE},${at(1)},2,rejected\n`);
  const versions = await seriesVersions(sql);
  t.equal(
    await imported(sql, `${WITHOUT}${TUBE},${at(0)},1\n${TUBE},${at(1)},2.5\n${TUBE},${at(2)},3\n`),
    '1 inserted, 1 updated, 1 unchanged; read 2x',
  );
  t.same(await stored(sql), ['1 00:00 1 0', '1 00:01 2.5 2', '1 00:02 3 1']);
  t.same(await lastWrite(sql), { runs: ['1 00:02-00:02'], prior: ['1 00:01 2 2'] });
  t.same(await seriesVersions(sql), [versions[0]! + 1, versions[1]!]);
  t.same(await latest(sql), ['1 0 00:00 1', '1 1 00:02 3', '1 2 00:01 2.5']);
});

t.test('with the column: a row is unchanged only when value and status both are', async (t) => {
  const sql = await registeredDatabase(t);
  const rows = [
    `${TUBE},${at(0)},1,approved`,
    `${TUBE},${at(1)},2,provisional`,
    `${TUBE},${at(2)},3,provisional`,
  ];
  await imported(sql, `${WITH_STATUS}${rows.join('\n')}\n`);
  const before = await historyCounts(sql);
  const versions = await seriesVersions(sql);
  t.equal(
    await imported(sql, `${WITH_STATUS}${rows.join('\n')}\n`),
    '0 inserted, 0 updated, 3 unchanged; read 2x',
  );
  t.same(await historyCounts(sql), before, 'no change row and no prior version');
  t.same(await seriesVersions(sql), versions, 'no new series version');

  t.equal(
    await imported(
      sql,
      `${WITH_STATUS}${TUBE},${at(0)},1,approved\n${TUBE},${at(1)},2,rejected\n${TUBE},${at(2)},3.5,provisional\n`,
    ),
    '0 inserted, 2 updated, 1 unchanged; read 2x',
  );
  t.same(await stored(sql), ['1 00:00 1 0', '1 00:01 2 2', '1 00:02 3.5 1']);
  t.same(await lastWrite(sql), { runs: [], prior: ['1 00:01 2 1', '1 00:02 3 1'] });
  t.same(await seriesVersions(sql), [versions[0]! + 1, versions[1]!]);
  t.same(await latest(sql), ['1 0 00:00 1', '1 1 00:02 3.5', '1 2 00:01 2']);

  // Rows changed on either side of an unchanged one are two corrections; the unchanged row is neither.
  t.equal(
    await imported(
      sql,
      `${WITH_STATUS}${TUBE},${at(0)},1,rejected\n${TUBE},${at(1)},2,rejected\n${TUBE},${at(2)},3.5,approved\n`,
    ),
    '0 inserted, 2 updated, 1 unchanged; read 2x',
  );
  t.same(await lastWrite(sql), {
    runs: [],
    prior: ['1 00:00 1 0', '1 00:02 3.5 1'],
  });
  t.same(await latest(sql), ['1 0 00:02 3.5', '1 2 00:01 2']);
});

t.test('a bad status is refused with its line, on either path, and nothing is imported', async (t) => {
  const sql = await registeredDatabase(t);
  const good = `${TUBE},${at(0)},1,approved`;
  const cases: [string, string][] = [
    [`${TUBE},${at(1)},2,`, 'status: is empty (expected approved, provisional or rejected)'],
    [`${TUBE},${at(1)},2,""`, 'status: is empty (expected approved, provisional or rejected)'],
    [
      `${TUBE},${at(1)},2,Approved`,
      'status: unknown status "Approved" (expected approved, provisional or rejected)',
    ],
    [
      `${TUBE},${at(1)},2,removed`,
      'status: unknown status "removed" (expected approved, provisional or rejected)',
    ],
    [
      `${TUBE},${at(1)},2, approved`,
      'status: unknown status " approved" (expected approved, provisional or rejected)',
    ],
    [`${TUBE},${at(1)},2`, 'row: expected 4 fields (tubeIdentifier,observedAt,value,status), found 3'],
    [
      `${TUBE},${at(1)},2,approved,x`,
      'row: expected 4 fields (tubeIdentifier,observedAt,value,status), found 5',
    ],
    [`"${TUBE}",${at(1)},2`, 'row: expected 4 fields (tubeIdentifier,observedAt,value,status), found 3'],
  ];
  for (const [row, expected] of cases) {
    // A bad row after a good one, and another good one after it: the file is refused whole.
    const csv = `${WITH_STATUS}${good}\n${row}\n${TUBE},${at(2)},3,rejected\n`;
    t.same(await rejection(sql, csv), [`data.csv:3: ${expected}`], row);
  }
  t.same(await stored(sql), [], 'nothing was imported');
  t.same(await rejection(sql, `${WITH_STATUS}${TUBE},nope,x,maybe\n`), [
    'data.csv:2: observedAt: must be an RFC 3339 date-time with a UTC offset, such as 2024-01-01T00:00:00Z or 2024-01-01T02:00:00+02:00',
    'data.csv:2: value: not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)',
    'data.csv:2: status: unknown status "maybe" (expected approved, provisional or rejected)',
  ]);

  // Into stored rows (the staging path): refused all the same, the stored rows as they were.
  await imported(sql, `${WITH_STATUS}${good}\n`);
  const before = await historyCounts(sql);
  t.same(await rejection(sql, `${WITH_STATUS}${TUBE},${at(0)},9,rejected\n${TUBE},${at(1)},2,unknown\n`), [
    'data.csv:3: status: unknown status "unknown" (expected approved, provisional or rejected)',
  ]);
  t.same(await stored(sql), ['1 00:00 1 0']);
  t.same(await historyCounts(sql), before);
});

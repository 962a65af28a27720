/**
 * The two paths of the measurements import (see src/importers/measurements/measurements.ts): which files the direct
 * path takes (the input is read once), which it hands to the staging path (read twice), and that the
 * hand-over leaves nothing of the direct attempt behind.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import { type ImportInput, streamInput } from '../../../src/importers/measurements/importInput.js';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { csvOf, minuteRows, OTHER, registeredDatabase, TUBE } from '../../helpers/importFixtures.js';

/** A re-readable input that counts how often the import read it, in chunks of `chunkBytes`. */
function countedInput(csv: string, chunkBytes = 1 << 20) {
  const bytes = Buffer.from(csv);
  const input = {
    readings: 0,
    full: false,
    async *read() {
      input.readings++;
      for (let at = 0; at < bytes.length; at += chunkBytes) yield bytes.subarray(at, at + chunkBytes);
    },
    async close() {},
  } satisfies ImportInput & { readings: number };
  return input;
}

const series = minuteRows;

/** Imports `csv` in chunks of `chunkBytes`; what it did, and how often it read its input. */
async function imported(sql: Sql, csv: string, chunkBytes?: number): Promise<string> {
  const input = countedInput(csv, chunkBytes);
  const r = await importMeasurements(sql, input, { name: 'data.csv' });
  return `${r.rows} rows: ${r.inserted} inserted, ${r.updated} updated, ${r.unchanged} unchanged; read ${input.readings}x`;
}

async function storedCount(sql: Sql): Promise<number> {
  const [row] = await sql<{ count: string }[]>`select count(*) from measurements`;
  return Number(row?.count);
}

t.test('new series, two tubes interleaved in time: read once, every row inserted', async (t) => {
  const sql = await registeredDatabase(t);
  const a = series(TUBE, '2024-01-01T00:00:00Z', 3000);
  const b = series(OTHER, '2024-01-01T00:00:00Z', 3000, 0.5);
  const csv = csvOf(a.flatMap((row, i) => [row, b[i]!]));
  t.equal(await imported(sql, csv, 4096), '6000 rows: 6000 inserted, 0 updated, 0 unchanged; read 1x');
  const sums = await sql<{ identifier: string; sum: number }[]>`
    select t.identifier::text, sum(measurement_value(m.value, m.value_thousandths)) as sum from measurements m join tubes t on t.id = m.tube_id
    group by 1 order by 1`;
  t.same(
    sums.map((r) => [r.identifier, r.sum]),
    [
      [TUBE, (2999 * 3000) / 2],
      [OTHER, (2999 * 3000) / 2 + 1500],
    ],
  );
});

t.test('readings after the stored ones (the next readout of a logger): read once', async (t) => {
  const sql = await registeredDatabase(t);
  await imported(sql, csvOf(series(TUBE, '2024-01-01T00:00:00Z', 100)));
  t.equal(
    await imported(sql, csvOf(series(TUBE, '2024-01-01T01:40:00Z', 100))),
    '100 rows: 100 inserted, 0 updated, 0 unchanged; read 1x',
  );
  t.equal(await storedCount(sql), 200);
});

t.test('a file reaching into stored rows goes to the staging path (upsert)', async (t) => {
  const sql = await registeredDatabase(t);
  await imported(sql, csvOf(series(TUBE, '2024-01-01T00:10:00Z', 10)));
  // Overlapping by its last row only, which is where a logger's readouts overlap.
  t.equal(
    await imported(sql, csvOf(series(TUBE, '2024-01-01T00:00:00Z', 11, 100))),
    '11 rows: 10 inserted, 1 updated, 0 unchanged; read 2x',
  );
  // Stored rows after the file's range: a plain insert would do, but the direct path looks only at its
  // first instant onwards, and so leaves such a (rare) backfill to the staging path too.
  t.equal(
    await imported(sql, csvOf(series(TUBE, '2023-12-31T00:00:00Z', 5))),
    '5 rows: 5 inserted, 0 updated, 0 unchanged; read 2x',
  );
  t.equal(await storedCount(sql), 25);
});

t.test('instants that do not rise: the staging path imports an unsorted file all the same', async (t) => {
  const sql = await registeredDatabase(t);
  t.equal(
    await imported(sql, csvOf(series(TUBE, '2024-01-01T00:00:00Z', 500).reverse()), 1024),
    '500 rows: 500 inserted, 0 updated, 0 unchanged; read 2x',
  );
});

t.test('a bad row after rows already copied: the direct attempt is rolled back', async (t) => {
  const sql = await registeredDatabase(t);
  // Small chunks: the first rows reach measurements long before the bad last line is read.
  const input = countedInput(
    `${csvOf(series(TUBE, '2024-01-01T00:00:00Z', 5000))}${TUBE},2025-01-01T00:00:00Z,x`,
    4096,
  );
  const error = await importMeasurements(sql, input, { name: 'data.csv' }).catch((e: unknown) => e);
  t.ok(error instanceof ImportRejected);
  t.match((error as ImportRejected).report(), /^data\.csv:5002: value: not a decimal number/);
  t.equal(input.readings, 2);
  t.equal(await storedCount(sql), 0);
});

t.test(
  'another import commits the same rows meanwhile: the key violation hands over',
  { timeout: 60_000 },
  async (t) => {
    const sql = await registeredDatabase(t);
    // 10 rows: the whole COPY is sent before the server meets the key, so the violation arrives after
    // the end of the COPY. 200,000 rows, meeting the key at the first: it arrives while rows are sent.
    for (const [count, conflicting] of [
      [10, 5],
      [200_000, 0],
    ] as const) {
      await sql`truncate measurements`;
      const other = await sql.reserve();
      // The other import's row is not committed when the direct path looks up the tube, so the direct
      // path copies, and waits on that row's key until the other transaction ends.
      await other`begin`;
      const at = new Date(Date.parse('2024-01-01T00:00:00Z') + conflicting * 60_000);
      await other`insert into measurements select id, ${at.toISOString()}, -7 from tubes where identifier = ${TUBE}`;
      const importing = imported(sql, csvOf(series(TUBE, '2024-01-01T00:00:00Z', count)));
      await waitForLockWait(sql);
      await other`commit`;
      other.release();
      t.equal(await importing, `${count} rows: ${count - 1} inserted, 1 updated, 0 unchanged; read 2x`);
      const [row] = await sql<{ value: number }[]>`
        select measurement_value(value, value_thousandths) as value from measurements where observed_at = ${at.toISOString()}`;
      t.equal(row?.value, conflicting, 'the file’s value replaced the other import’s');
    }
  },
);

t.test('a stream longer than what is kept for a second reading', async (t) => {
  const sql = await registeredDatabase(t);
  const bytes = Buffer.from(csvOf(series(TUBE, '2024-01-01T00:00:00Z', 2000)));
  const chunks = Array.from({ length: Math.ceil(bytes.length / 1000) }, (_, i) =>
    bytes.subarray(i * 1000, i * 1000 + 1000),
  );
  for (const kept of [1, 10_000, bytes.length * 2]) {
    await sql`truncate measurements`;
    const result = await importMeasurements(sql, streamInput(Readable.from(chunks), kept), { name: 'stdin' });
    t.equal(result.inserted, 2000, `keeping ${kept} bytes`);
    const [sum] = await sql<
      { sum: number }[]
    >`select sum(measurement_value(value, value_thousandths)) as sum from measurements`;
    t.equal(sum?.sum, (1999 * 2000) / 2, `every row once, keeping ${kept} bytes`);
  }
});

/** Resolves once a session of this database waits for a lock (the import, on the other's row). */
async function waitForLockWait(sql: Sql): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    const [waiting] = await sql<{ count: string }[]>`
      select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    if (Number(waiting?.count) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the import never waited for the other transaction');
}

t.test(
  'a file of many days: their rollups written while it is read, each as the database sums it',
  async (t) => {
    const sql = await registeredDatabase(t);
    // Two tubes of 6,000 days, three rows a day of two statuses: more rollup rows than the direct path keeps.
    const days = 6000;
    const statuses = ['approved', 'rejected', 'approved'];
    const lines: string[] = [];
    for (let day = 0; day < days; day++) {
      for (const [i, status] of statuses.entries()) {
        const at = new Date(Date.UTC(2000, 0, 1 + day, 6 * (i + 1))).toISOString();
        // Days of a value too large for the rollups to sum are left to the database (directDays.ts).
        const value =
          day % 1000 === 10 && i === 1 ? '1e150' : (((day * 7 + i * 3) % 11) / 10 - 0.3).toFixed(2);
        lines.push(`${TUBE},${at},${value},${status}`);
        lines.push(`${OTHER},${at},${(((day * 5 + i) % 13) / 3).toFixed(3)},${status}`);
      }
    }
    const csv = `tubeIdentifier,observedAt,value,status\n${lines.join('\n')}\n`;
    t.equal(await imported(sql, csv, 16_384), '36000 rows: 36000 inserted, 0 updated, 0 unchanged; read 1x');

    // Written during the COPY: rows the file sent after them have a later command of the transaction.
    const [order] = await sql<{ summed: string; left: string; rollups: string }[]>`
    with last as (select max(cmin::text::int) as cmin from measurements)
    select count(*) filter (where r.cmin::text::int < last.cmin and r.mean is not null) as summed,
           count(*) filter (where r.cmin::text::int < last.cmin and r.mean is null) as left,
           count(*) as rollups
    from measurement_day_rollups r, last`;
    t.ok(Number(order?.summed) > 0, 'days summed by the import written before the file’s last rows');
    t.ok(Number(order?.left) > 0, 'days left to the database written before the file’s last rows');
    // Each tube's day and set of statuses: the day's statuses (2 a day) and each of them alone, but for the
    // days of a large value (6), whose mean is not kept.
    t.equal(order?.rollups, String(2 * days * 3 - 6 * 2));

    const rollups = () => sql`
    select t.identifier::text, r.day, r.statuses, r.present, r.count, r.mean, r.min, r.max
    from measurement_day_rollups r join tubes t on t.id = r.tube_id order by 1, 2, 3`;
    const written = await rollups();
    await sql`
    select rollup_measurement_days(tube_id, array_agg(distinct day))
    from measurement_day_rollups group by tube_id`;
    t.same(await rollups(), written, 'the rollups the database sums from the stored rows');
  },
);

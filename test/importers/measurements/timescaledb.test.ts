/**
 * The import on a native TimescaleDB hypertable (testkit/timescale.ts): COPY, the temporary staging
 * table, savepoints, the plain INSERT, the upsert and its `xmax = 0` count, compressed chunks and VACUUM
 * behave as on plain PostgreSQL.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { usesTimescaleDb } from '../../../src/db/migrate.js';
import { type Instant, parseDateTime } from '../../../src/domain/datetime.js';
import { STATUSES } from '../../../src/domain/status.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import { removeMeasurements, setStatus } from '../../../src/importers/measurements/corrections.js';
import { importMeasurements, vacuumMeasurements } from '../../../src/importers/measurements/measurements.js';
import { timescaleServerOrSkip } from '../../helpers/database.js';
import { OTHER, registeredDatabase, TUBE } from '../../helpers/importFixtures.js';
import { compressChunks } from '../../helpers/timescale.js';

const server = timescaleServerOrSkip(t);
if (server) {
  const sql = await registeredDatabase(t, server);

  /** Imports a file data.csv of rows [tube, observedAt, value] (lines 2, 3, …), or with their status. */
  const importRows = (rows: [string, string, number][] | [string, string, number, number][]) => {
    const header =
      rows[0]?.length === 4 ? 'tubeIdentifier,observedAt,value,status' : 'tubeIdentifier,observedAt,value';
    const lines = rows.map(([tube, observedAt, value, status]) =>
      [tube, observedAt, value, ...(status === undefined ? [] : [STATUSES[status]])].join(','),
    );
    return importMeasurements(sql, Readable.from([`${header}\n${lines.join('\n')}\n`]), { name: 'data.csv' });
  };

  t.test('insert, re-import, correction on compressed chunks, duplicates: on a hypertable', async (t) => {
    t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
    // Two 30-day chunks and two tubes.
    const rows: [string, string, number][] = [
      [TUBE, '2024-01-01T00:00:00.000001Z', -1.23],
      [TUBE, '2024-03-01T02:00:00+02:00', 0.1],
      [OTHER, '2024-01-01T00:00:00Z', 123456789.012345],
    ];
    t.same(await importRows(rows), { rows: 3, inserted: 3, updated: 0, unchanged: 0 });
    t.same(await importRows(rows), { rows: 3, inserted: 0, updated: 0, unchanged: 3 });

    t.same(await compressChunks(sql), { compressed: 2, uncompressed: 0 }, 'both chunks compressed');
    t.same(
      await importRows([
        [TUBE, '2024-01-01T00:00:00.000001Z', -1.24],
        [TUBE, '2024-01-02T00:00:00Z', 5],
      ]),
      { rows: 2, inserted: 1, updated: 1, unchanged: 0 },
      'a corrected value replaces the stored one in a compressed chunk',
    );
    await vacuumMeasurements(sql);
    const stored = await sql<{ row: string }[]>`
    select t.number || ' ' || to_char(m.observed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || ' ' ||
           measurement_value(m.value, m.value_thousandths)::text as row
    from measurements m join tubes t on t.id = m.tube_id order by t.number, m.observed_at`;
    t.same(
      stored.map((r) => r.row),
      [
        '1 2024-01-01T00:00:00.000001 -1.24',
        '1 2024-01-02T00:00:00.000000 5',
        '1 2024-03-01T00:00:00.000000 0.1',
        '2 2024-01-01T00:00:00.000000 123456789.012345',
      ],
    );

    const error = await importRows([
      [TUBE, '2025-01-01T00:00:00Z', 1],
      [TUBE, '2025-01-01T01:00:00+01:00', 2],
    ]).catch((e: unknown) => e);
    t.ok(error instanceof ImportRejected);
    t.equal(
      (error as ImportRejected).report(),
      'data.csv:3: observedAt: the same tube and instant as line 2 (a tube has one value per instant)\n',
    );
  });

  t.test('statuses on a hypertable: imported, set and removed in a compressed chunk', async (t) => {
    await sql`truncate measurements, measurement_changes, measurement_corrections, latest_measurements`;
    const at = (day: number) => new Date(Date.UTC(2024, 5, 1 + day)).toISOString();
    const instant = (day: number) => (parseDateTime(at(day)) as { instant: Instant }).instant;
    /** Imports rows [day, value, status] of TUBE from a file with the status column. */
    const importStatuses = (rows: [number, number, number][]) =>
      importRows(
        rows.map(([day, value, status]): [string, string, number, number] => [TUBE, at(day), value, status]),
      );
    const days = [0, 1, 2, 3, 4, 5].map((day): [number, number, number] => [day, day, day < 3 ? 0 : 1]);
    t.same(await importStatuses(days), { rows: 6, inserted: 6, updated: 0, unchanged: 0 });
    t.same(await compressChunks(sql), { compressed: 1, uncompressed: 0 }, 'the chunk compressed');
    const history = async () => {
      const [row] = await sql<{ order: string }[]>`
      select coalesce(greatest((select max(change_order) from measurement_changes),
                               (select max(change_order) from measurement_corrections)), 0) as order`;
      const order = Number(row?.order);
      const runs = await sql<{ row: string }[]>`
      select to_char(first_at at time zone 'UTC', 'DD') || '-' || to_char(last_at at time zone 'UTC', 'DD') as row
      from measurement_changes where change_order = ${order} and not corrected order by first_at`;
      const corrections = await sql<{ row: string }[]>`
      select to_char(observed_at at time zone 'UTC', 'DD') || ' ' || value_before || ' ' || status_before ||
             ' -> ' || coalesce(value_after || ' ' || status_after, 'removed') as row
      from measurement_corrections where change_order = ${order} order by observed_at`;
      return { runs: runs.map((r) => r.row), corrections: corrections.map((r) => r.row) };
    };
    const latest = async () =>
      (
        await sql<{ row: string }[]>`
        select status || ' ' || to_char(observed_at at time zone 'UTC', 'DD') || ' ' || value as row
        from latest_measurements order by status`
      ).map((r) => r.row);
    t.same(await latest(), ['0 03 2', '1 06 5']);

    t.same(
      await importStatuses([
        [1, 1, 0],
        [2, 2, 2],
        [3, 3.5, 1],
      ]),
      { rows: 3, inserted: 0, updated: 2, unchanged: 1 },
      'a status and a value corrected in the compressed chunk',
    );
    t.same(await history(), { runs: [], corrections: ['03 2 0 -> 2 2', '04 3 1 -> 3.5 1'] });
    t.same(await latest(), ['0 02 1', '1 06 5', '2 03 2']);

    t.equal(await setStatus(sql, [TUBE], { from: instant(0), to: instant(5) }, 'approved'), 3);
    t.same(await history(), {
      runs: [],
      corrections: ['03 2 2 -> 2 0', '04 3.5 1 -> 3.5 0', '05 4 1 -> 4 0'],
    });
    t.same(await latest(), ['0 05 4', '1 06 5']);

    t.equal(await removeMeasurements(sql, TUBE, { from: instant(4), to: instant(10) }), 2);
    t.same(await history(), { runs: [], corrections: ['05 4 0 -> removed', '06 5 1 -> removed'] });
    t.same(await latest(), ['0 04 3.5']);
    const stored = await sql<{ row: string }[]>`
    select to_char(observed_at at time zone 'UTC', 'DD') || ' ' || measurement_value(value, value_thousandths) || ' ' || status as row
    from measurements order by observed_at`;
    t.same(
      stored.map((r) => r.row),
      ['01 0 0', '02 1 0', '03 2 0', '04 3.5 0'],
    );
  });

  t.test('a status change after a removal decompressed the chunk: every row of the interval', async (t) => {
    await sql`truncate measurements, measurement_changes, measurement_corrections, latest_measurements`;
    const at = (hour: number) => new Date(Date.UTC(2024, 0, 1, hour)).toISOString();
    const hours = (from: number, to: number) => ({
      from: (parseDateTime(at(from)) as { instant: Instant }).instant,
      to: (parseDateTime(at(to)) as { instant: Instant }).instant,
    });
    const importHours = (list: number[]) =>
      importRows(list.map((hour): [string, string, number] => [TUBE, at(hour), 0]));
    await importHours([1, 2, 0]);
    t.equal(await setStatus(sql, 'all', hours(0, 3), 'approved'), 3);
    t.same(await compressChunks(sql), { compressed: 1, uncompressed: 0 }, 'the chunk compressed');
    t.equal(await removeMeasurements(sql, TUBE, hours(0, 1)), 1);
    await importHours([0]);
    t.equal(await setStatus(sql, [TUBE, OTHER], hours(0, 3), 'provisional'), 2);
    t.same(await sql`select status, count(*)::int from measurements group by 1`, [{ status: 1, count: 3 }]);
  });
}

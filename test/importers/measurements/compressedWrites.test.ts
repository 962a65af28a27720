/**
 * Writes into compressed history on native TimescaleDB leave exactly what the same writes leave on plain
 * PostgreSQL: the measurements, the change rows, the corrections with their versions before, the latest
 * measurements and the daily rollups. Each write finds its chunks compressed. These are the paths that
 * read stored rows beside the write (the staging path's check for stored rows in the file's range and its
 * plain INSERT, the corrections' versions before, status and remove), and the maintenance after an
 * import, which vacuums the chunks it wrote and no other (the table on PostgreSQL), and nothing when
 * nothing was written. They do so on a server that bounds the rows a transaction may decompress far
 * below what they decompress.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { connect, type Sql } from '../../../src/db/connect.js';
import { usesTimescaleDb } from '../../../src/db/migrate.js';
import { type Instant, parseDateTime } from '../../../src/domain/datetime.js';
import { removeMeasurements, setStatus } from '../../../src/importers/measurements/corrections.js';
import {
  changeLogMark,
  importMeasurements,
  type MeasurementsImported,
  vacuumMeasurements,
} from '../../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { freshDatabase, timescaleServerOrSkip } from '../../helpers/database.js';
import { OTHER, registeredDatabase, TUBE, TWO_TUBES } from '../../helpers/importFixtures.js';
import { chunkCompression, compressChunks } from '../../helpers/timescale.js';

const server = timescaleServerOrSkip(t);

/** Three 30-day chunks' worth of hourly rows of both tubes, from 2024-01-01, written by an import. */
const HISTORY_HOURS = 24 * 80;
const hour = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 3_600_000).toISOString();
const instant = (text: string) => (parseDateTime(text) as { instant: Instant }).instant;

const csvOf = (rows: [string, string, number][]) =>
  Readable.from([`tubeIdentifier,observedAt,value\n${rows.map((row) => row.join(',')).join('\n')}\n`]);
const hours = (tube: string, from: number, count: number, shift: number): [string, string, number][] =>
  Array.from({ length: count }, (_, i) => [tube, hour(from + i), ((from + i) % 97) / 10 + shift]);

/** Everything a write keeps, as text, without xids, orders and clock times. */
async function kept(sql: Sql): Promise<Record<string, string[]>> {
  const rows = async (query: Promise<Record<string, unknown>[]>) =>
    (await query).map((row) => Object.values(row).join(' '));
  return {
    measurements: await rows(sql`
      select t.number, m.observed_at, measurement_value(m.value, m.value_thousandths) as value, m.status
      from measurements m join tubes t on t.id = m.tube_id order by t.number, m.observed_at`),
    changes: await rows(sql`
      select t.number, c.first_at, c.last_at, c.corrected
      from measurement_changes c join tubes t on t.id = c.tube_id
      order by c.change_order, t.number, c.first_at, c.corrected`),
    corrections: await rows(sql`
      select t.number, c.observed_at, c.value_before, c.status_before, c.value_after, c.status_after
      from measurement_corrections c join tubes t on t.id = c.tube_id
      order by c.change_order, t.number, c.observed_at`),
    latest: await rows(sql`
      select t.number, l.status, l.observed_at, l.value
      from latest_measurements l join tubes t on t.id = l.tube_id order by t.number, l.status`),
    rollups: await rows(sql`
      select t.number, r.day, r.statuses, r.present, r.count, r.mean, r.min, r.max
      from measurement_day_rollups r join tubes t on t.id = r.tube_id order by t.number, r.day, r.statuses`),
  };
}

/** The relations of `measurements` that a manual VACUUM has visited. */
async function vacuumed(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select relname as name from pg_stat_user_tables
    where last_vacuum is not null and (relname = 'measurements' or relname like '\\_hyper\\_%')
    order by relname`;
  return rows.map((row) => row.name);
}

if (server) {
  t.test('writes into compressed chunks keep what they keep on a plain table', async (t) => {
    // A server whose bound on the rows a transaction may decompress is far below any batch here: the
    // writers lift it for themselves.
    const { sql: setup, url, name } = await freshDatabase(t, { server });
    await upsertRegistry(setup, TWO_TUBES);
    await setup.unsafe(
      `alter database ${name} set timescaledb.max_tuples_decompressed_per_dml_transaction = 10`,
    );
    const timescale = connect(url, { max: 2 });
    t.teardown(() => timescale.end({ timeout: 1 }));
    const [bound] = await timescale<{ value: string }[]>`
      select current_setting('timescaledb.max_tuples_decompressed_per_dml_transaction') as value`;
    t.equal(bound?.value, '10', 'the bound applies to its sessions');
    const plain = await registeredDatabase(t);
    t.ok(await usesTimescaleDb(timescale), 'a hypertable');
    t.notOk(await usesTimescaleDb(plain), 'a plain table');
    const both = async <T>(write: (sql: Sql) => Promise<T>): Promise<T> => {
      const [onTimescale, onPlain] = [await write(timescale), await write(plain)];
      t.same(onTimescale, onPlain, 'the same answer on both');
      return onTimescale;
    };
    const importBoth = (rows: [string, string, number][]) =>
      both((sql) => importMeasurements(sql, csvOf(rows), { name: 'data.csv' }));

    await importBoth([...hours(TUBE, 0, HISTORY_HOURS, 0), ...hours(OTHER, 0, HISTORY_HOURS, 1)]);
    const compressed = await compressChunks(timescale);
    t.ok(compressed.compressed >= 3 && compressed.uncompressed === 0, 'every chunk compressed');
    const stillCompressed = async () =>
      t.same(await chunkCompression(timescale), compressed, 'its chunks compressed before the write');

    await stillCompressed();
    t.same(
      await importBoth(hours(TUBE, 24 * 40, 24, 5)),
      { rows: 24, inserted: 0, updated: 24, unchanged: 0 } satisfies MeasurementsImported,
      'a day again with other values: the upsert',
    );
    await stillCompressed();
    t.same(
      (await importBoth(hours(TUBE, 24 * 40, 24, 5))).unchanged,
      24,
      'the same day again changes nothing',
    );
    // A gap inside compressed history, filled again: no stored row in the file's range, the plain INSERT.
    await both((sql) =>
      removeMeasurements(sql, OTHER, { from: instant(hour(24 * 10)), to: instant(hour(24 * 11)) }),
    );
    await stillCompressed();
    t.same(
      await importBoth(hours(OTHER, 24 * 10 + 2, 20, 3)),
      { rows: 20, inserted: 20, updated: 0, unchanged: 0 },
      'a gap filled again: every row inserted',
    );
    // Both tubes, one across a chunk's end (2024-02-17), some rows new (hours of the removed day), some not.
    t.same(
      await importBoth([...hours(OTHER, 24 * 10, 30, 7), ...hours(TUBE, 24 * 46, 48, 2)]),
      { rows: 78, inserted: 4, updated: 74, unchanged: 0 },
      'an upsert over two tubes and two chunks',
    );
    t.equal(
      await both((sql) =>
        setStatus(
          sql,
          [TUBE, OTHER],
          { from: instant(hour(24 * 65)), to: instant(hour(24 * 75)) },
          'approved',
        ),
      ),
      2 * 24 * 10,
      'a status over both tubes',
    );
    t.equal(
      await both((sql) =>
        removeMeasurements(sql, TUBE, { from: instant(hour(24 * 30)), to: instant(hour(24 * 31 + 5)) }),
      ),
      29,
      'a removal',
    );
    t.same(await kept(timescale), await kept(plain), 'the same measurements, history, latest and rollups');
  });

  t.test('an import maintains the chunks it wrote, or nothing', async (t) => {
    for (const [engine, sql] of [
      ['TimescaleDB', await registeredDatabase(t, server)],
      ['PostgreSQL', await registeredDatabase(t)],
    ] as const) {
      await importMeasurements(sql, csvOf(hours(TUBE, 0, 24 * 80, 0)), { name: 'data.csv' });
      const timescale = engine === 'TimescaleDB';
      if (timescale) await compressChunks(sql);
      const unchanged = await changeLogMark(sql);
      await importMeasurements(sql, csvOf(hours(TUBE, 24 * 40, 24, 0)), { name: 'data.csv' });
      await vacuumMeasurements(sql, unchanged);
      t.same(await vacuumed(sql), [], `${engine}: nothing written, nothing vacuumed`);

      const since = await changeLogMark(sql);
      await importMeasurements(sql, csvOf(hours(TUBE, 24 * 40, 24, 1)), { name: 'data.csv' });
      await vacuumMeasurements(sql, since);
      const [chunk] = await sql<{ name: string }[]>`
        select chunk_name as name from timescaledb_information.chunks
        where hypertable_name = 'measurements' and range_start <= ${hour(24 * 40)}
          and range_end > ${hour(24 * 40)}`.catch(() => []);
      const written = timescale ? chunk!.name : 'measurements';
      t.same(await vacuumed(sql), [written], `${engine}: the chunk it wrote alone (the table)`);
    }
  });
}

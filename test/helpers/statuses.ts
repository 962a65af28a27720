/**
 * Measurements' statuses in tests: set in the database as a correction would set them, and each format
 * with `include=status` read by readers nobody here wrote (apache-arrow, polars, pandas), compared with
 * the JSON of the same request.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { MessageHeader, tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { STATUSES, type Status } from '../../src/engine/schemas.js';
import { rollUpDays } from '../../testkit/fixtures.js';
import { arrowColumn, messageTypes, micros, mismatches } from './arrow.js';

export const PYTHON = '/usr/bin/python3';
export const pandasMissing = spawnSync(PYTHON, ['-c', 'import pandas']).status !== 0;

/**
 * Gives the measurements of `tubeId` whose minute since the epoch is `k` modulo 3 the status STATUSES[k]
 * (0 approved, 1 provisional, 2 rejected), from `from` on (every one when not given), and raises the
 * tube's series version and computes its daily rollups again, as a writer does with a change.
 */
export async function cycleStatuses(sql: Sql, tubeId: number, from = '-infinity'): Promise<void> {
  await sql`
    update measurements set status = (floor(extract(epoch from observed_at) / 60)::int8 % 3)::int2
    where tube_id = ${tubeId} and observed_at >= ${from}::timestamptz`;
  await raiseSeriesVersion(sql, tubeId);
}

/** Gives the measurements of `tubeId` in [from, to) status `status`, as cycleStatuses does. */
export async function setStatus(sql: Sql, tubeId: number, status: Status, from: string, to: string) {
  await sql`
    update measurements set status = ${STATUSES.indexOf(status)}
    where tube_id = ${tubeId} and observed_at >= ${from}::timestamptz and observed_at < ${to}::timestamptz`;
  await raiseSeriesVersion(sql, tubeId);
}

/** What a writer does besides the rows: the series version raised, the daily rollups computed again. */
async function raiseSeriesVersion(sql: Sql, tubeId: number) {
  await sql`
    update tubes set series_version = series_version + 1, series_changed_at = clock_timestamp()
    where id = ${tubeId}`;
  await rollUpDays(sql, [tubeId]);
  await sql`vacuum analyze measurements`;
}

/** A measurement as the JSON writes it with `include=status`. */
export interface StatusMeasurement {
  observedAt: string;
  value: number;
  status: Status;
}

/** What a row of any format carries besides the measurement: its tube's fields on the network. */
export interface StatusRow extends StatusMeasurement {
  tubeIdentifier?: string;
  unit?: string;
  verticalDatum?: string;
}

const NETWORK_STRINGS = ['tubeIdentifier', 'unit', 'verticalDatum'] as const;

/**
 * The Arrow body of a request with `include=status` read by apache-arrow and polars, against `rows`
 * (the JSON's): the column `status` right after `value`, dictionary-encoded as int8 indices into utf8,
 * not nullable, its dictionary `statuses` sent once, whole, before the first record batch; every row's
 * status, instant and value. `network` for the network's columns (tube, unit and datum around them).
 */
export function provesStatusArrow(
  t: Test,
  arrow: Buffer,
  rows: readonly StatusRow[],
  { network = false, statuses = STATUSES as readonly string[] } = {},
): void {
  const dictionaries = network ? 4 : 1;
  const types = messageTypes(arrow);
  t.same(
    types.slice(0, 1 + dictionaries),
    [MessageHeader.Schema, ...Array(dictionaries).fill(MessageHeader.DictionaryBatch)],
    'the schema, then each dictionary once, whole',
  );
  t.notOk(types.slice(1 + dictionaries).includes(MessageHeader.DictionaryBatch), 'no dictionary later');
  t.same(arrow.subarray(-8), Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), 'the end-of-stream marker');

  const columns = network
    ? ['tubeIdentifier', 'observedAt', 'value', 'status', 'unit', 'verticalDatum']
    : ['observedAt', 'value', 'status'];
  const table = tableFromIPC(arrow);
  const status = table.schema.fields.find((field) => field.name === 'status');
  t.same(
    table.schema.fields.map((field) => field.name),
    columns,
    'apache-arrow: status right after value',
  );
  t.equal(String(status?.type), 'Dictionary<Int8, Utf8>', 'apache-arrow: int8 indices into utf8');
  t.equal(status?.nullable, false, 'apache-arrow: not nullable');
  t.equal(table.numRows, rows.length, 'apache-arrow: every row');
  t.same(
    [...table.getChild('status')!.toArray()],
    rows.map((row) => row.status),
    'apache-arrow: every status',
  );
  // A stream without a record batch gives apache-arrow's table no dictionary to show.
  if (rows.length > 0) {
    const dictionary = table.getChild('status')!.data[0]!.dictionary!;
    t.same([...dictionary.toArray()], statuses, 'apache-arrow: the whole dictionary');
  }
  t.equal(
    mismatches(
      arrowColumn(table, 'observedAt'),
      rows.map((row) => micros(row.observedAt)),
    ),
    0,
    'apache-arrow: instants to the µs',
  );
  t.equal(
    mismatches(
      arrowColumn(table, 'value'),
      rows.map((row) => row.value),
    ),
    0,
    'apache-arrow: values bit for bit',
  );
  if (network) {
    for (const name of NETWORK_STRINGS) {
      t.same(
        [...table.getChild(name)!.toArray()],
        rows.map((row) => row[name]),
        `apache-arrow: every ${name}`,
      );
    }
  }

  const frame = pl.readIPCStream(arrow);
  t.same(frame.columns, columns, 'polars reads the columns');
  t.equal(frame.height, rows.length, 'polars reads every row');
  if (rows.length === 0) return;
  t.match(String(frame.getColumn('status').dtype), /Categorical|Enum/, 'polars: a categorical column');
  t.same(
    frame.getColumn('status').cast(pl.Utf8).toArray(),
    rows.map((row) => row.status),
    'polars: every status',
  );
  t.equal(
    mismatches(
      frame.getColumn('observedAt').cast(pl.Int64).toArray() as unknown as number[],
      rows.map((row) => micros(row.observedAt)),
    ),
    0,
    'polars: instants to the µs',
  );
  t.equal(
    mismatches(
      frame.getColumn('value').toArray() as number[],
      rows.map((row) => row.value),
    ),
    0,
    'polars: values bit for bit',
  );
  if (network) {
    for (const name of NETWORK_STRINGS) {
      t.same(
        frame.getColumn(name).cast(pl.Utf8).toArray(),
        rows.map((row) => row[name]),
        `polars: every ${name}`,
      );
    }
  }
}

/**
 * The CSV at `url` (the key in `X-API-Key`) as pandas reads it with no option: its columns, the status
 * column's dtype, and each row as [observedAt, value, status] (and the tube's identifier on the
 * network). The instants stay text, as the JSON's, to be compared as they are.
 */
export async function pandasRows(url: string, key: string) {
  const script = `
import json, os, pandas
frame = pandas.read_csv(os.environ["CSV_URL"], storage_options={"X-API-Key": os.environ["API_KEY"]})
names = ["observedAt", "value", "status"] + (["tubeIdentifier"] if "tubeIdentifier" in frame else [])
print(json.dumps({
  "columns": list(frame.columns),
  "status": str(frame["status"].dtype),
  "rows": frame[names].values.tolist(),
}))
`;
  const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], {
    env: { CSV_URL: url, API_KEY: key },
    maxBuffer: 1 << 28,
  });
  return JSON.parse(stdout) as { columns: string[]; status: string; rows: (string | number)[][] };
}

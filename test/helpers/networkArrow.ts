/** The network endpoint's Arrow against its JSON, for the tests of plain PostgreSQL and TimescaleDB. */

import { MessageHeader, tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import type { Test } from 'tap';
import { arrow } from '../../src/engine/write/arrow.js';

const ARROW = arrow.mediaType;

import { arrowColumn, messageTypes, micros, mismatches } from './arrow.js';
import { get } from './http.js';
import { decodedBytes, type NetworkQuery, networkPath } from './network.js';

const STRINGS = ['tubeIdentifier', 'unit', 'verticalDatum'] as const;
const FLOATS = ['value', 'min', 'max'] as const;

interface Series {
  tubeIdentifier: string;
  unit: string;
  verticalDatum: string;
  measurements: { observedAt: string; value: number; min?: number; max?: number; count?: number }[];
}

/**
 * The network's Arrow for `query` read by apache-arrow (`tableFromIPC`) and polars (`readIPCStream`)
 * and compared with the JSON of the same request value by value: the tube, unit and datum of each row
 * through their dictionaries, instants to the microsecond, doubles bit for bit.
 */
export async function provesArrowAsJson(
  t: Test,
  base: string,
  key: string,
  query: NetworkQuery,
  headers: Record<string, string> = {},
) {
  const as = { 'x-api-key': key };
  const response = await get(base, networkPath(query, '&format=arrow'), { ...as, ...headers });
  t.equal(response.status, 200);
  t.equal(response.headers['content-type'], ARROW);
  t.match(response.headers['content-disposition'], /filename="groundwater-measurements_\w+_\w+\.arrows"/);
  const arrow = decodedBytes(response);
  const json = JSON.parse((await get(base, networkPath(query), as)).body);
  const series: Series[] = json.series;
  const rows = series.flatMap((s) => s.measurements.map((m) => ({ ...m, ...s })));
  const aggregated = query.aggregate !== undefined;
  const columns = ['observedAt', 'value', ...(aggregated ? ['min', 'max', 'count'] : [])];

  const types = messageTypes(arrow);
  t.same(
    types.slice(0, 4),
    [
      MessageHeader.Schema,
      MessageHeader.DictionaryBatch,
      MessageHeader.DictionaryBatch,
      MessageHeader.DictionaryBatch,
    ],
    'the schema, then each dictionary once, whole',
  );
  t.notOk(types.slice(4).includes(MessageHeader.DictionaryBatch), 'no dictionary after the first batch');
  t.same(arrow.subarray(-8), Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), 'the end-of-stream marker');

  const table = tableFromIPC(arrow);
  t.same(
    table.schema.fields.map((field) => [field.name, String(field.type), field.nullable]),
    [
      ['tubeIdentifier', 'Dictionary<Int32, Utf8>', false],
      ...columns.map((name) => [
        name,
        { observedAt: 'Timestamp<MICROSECOND, UTC>', count: 'Int64' }[name] ?? 'Float64',
        false,
      ]),
      ['unit', 'Dictionary<Int32, Utf8>', false],
      ['verticalDatum', 'Dictionary<Int32, Utf8>', false],
    ],
    'the columns, none nullable',
  );
  // Each response's token names its own snapshot: another database's commit between the two requests
  // moves it, so the token is compared within the Arrow response and the rest of the head across both.
  const { series: _, syncToken: __, ...head } = json;
  const { syncToken, ...metadata } = Object.fromEntries(table.schema.metadata);
  t.same(metadata, head, "the JSON's head as the schema's metadata");
  t.match(syncToken, /^[A-Za-z0-9_-]{1,200}$/, 'a token');
  t.equal(syncToken, response.headers['sync-token'], 'with the token of its Sync-Token');
  t.equal(table.numRows, rows.length, 'every row');
  for (const name of STRINGS) {
    t.same(
      [...table.getChild(name)!.toArray()],
      rows.map((row) => row[name]),
      `every ${name}`,
    );
  }
  t.equal(
    mismatches(
      arrowColumn(table, 'observedAt'),
      rows.map((row) => micros(row.observedAt)),
    ),
    0,
    'instants to the µs',
  );
  for (const name of FLOATS.filter((name) => columns.includes(name))) {
    t.equal(
      mismatches(
        arrowColumn(table, name),
        rows.map((row) => row[name]!),
      ),
      0,
      `every ${name}, bit for bit`,
    );
  }
  if (aggregated) {
    t.equal(
      mismatches(
        arrowColumn(table, 'count'),
        rows.map((row) => BigInt(row.count!)),
      ),
      0,
      'every count',
    );
  }

  const frame = pl.readIPCStream(arrow);
  t.same(frame.columns, ['tubeIdentifier', ...columns, 'unit', 'verticalDatum'], 'polars reads the columns');
  t.equal(frame.height, rows.length, 'polars reads every row');
  if (rows.length === 0) return;
  for (const name of STRINGS) {
    t.same(
      frame.getColumn(name).cast(pl.Utf8).toArray(),
      rows.map((row) => row[name]),
      `polars: every ${name}`,
    );
  }
  const instants = frame.getColumn('observedAt').cast(pl.Int64).toArray() as unknown as number[];
  t.equal(
    mismatches(
      instants,
      rows.map((row) => micros(row.observedAt)),
    ),
    0,
    'polars: instants to the µs',
  );
  for (const name of FLOATS.filter((name) => columns.includes(name))) {
    const read = frame.getColumn(name).toArray() as number[];
    t.equal(
      mismatches(
        read,
        rows.map((row) => row[name]!),
      ),
      0,
      `polars: every ${name}, bit for bit`,
    );
  }
}

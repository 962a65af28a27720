/**
 * The Arrow messages alone (src/engine/write/arrowMessages.ts): a series stream is byte for byte what
 * apache-arrow's own writer writes for the table it reads back; dictionary-encoded utf8 columns with
 * int32 indices (what the network endpoint needs) read in apache-arrow and polars; a cut-off series refused.
 */
import { MessageHeader, tableFromIPC, tableToIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import t from 'tap';
import { batchOf, type MeasurementValues } from '../../src/engine/batch.js';
import { arrow, seriesMetadata } from '../../src/engine/write/arrow.js';
import {
  batchFields,
  dictionaryBatchMessage,
  dictionaryField,
  END_OF_STREAM,
  recordBatchMessage,
  schemaMessage,
} from '../../src/engine/write/arrowMessages.js';
import { CutOffGuard } from '../../src/engine/write/document.js';
import { messageTypes } from '../helpers/arrow.js';

const HEAD = {
  tubeIdentifier: '7d0c2b9e-5f3a-4e1d-9c8b-6a5f4e3d2c1b',
  from: '1969-12-31T00:00:00Z',
  to: '2024-01-01T00:00:00.5Z',
  unit: 'cm',
  verticalDatum: 'TAW',
};

const COLUMNS = ['observedAt', 'value'] as const;

const ROWS: MeasurementValues[] = [
  { observedAt: '1969-12-31T23:59:59.999999Z', value: 0.1 + 0.2, min: -1e-7, max: 1e21, count: 2 ** 40 },
  { observedAt: '2024-01-01T00:00:00.000001Z', value: -1.23, min: -2, max: 5, count: 3 },
];

/** A whole series stream as the representation writes it, batch by batch. */
function series(aggregate: boolean, batches: MeasurementValues[][]): Buffer {
  const representation = arrow.series();
  const rows = aggregate
    ? batches
    : batches.map((batch) => batch.map(({ observedAt, value }) => ({ observedAt, value })));
  return Buffer.concat([
    representation.head(aggregate ? { ...HEAD, aggregate: 'P1D' } : HEAD),
    ...rows.map((batch, i) => representation.batch(batchOf(batch), i === 0)),
    representation.close(),
  ]);
}

t.test('a series stream is what apache-arrow writes for the same table', async (t) => {
  for (const aggregate of [false, true]) {
    for (const batches of [[ROWS], [ROWS.slice(0, 1), ROWS.slice(1)], []]) {
      const stream = series(aggregate, batches);
      const table = tableFromIPC(stream);
      t.equal(table.numRows, batches.flat().length);
      t.same(
        messageTypes(stream),
        [MessageHeader.Schema, ...batches.map(() => MessageHeader.RecordBatch)],
        'a record batch per batch',
      );
      t.ok(
        Buffer.from(tableToIPC(table, 'stream')).equals(stream),
        `aggregate ${aggregate}, ${batches.length} batches`,
      );
      t.ok(stream.subarray(-8).equals(END_OF_STREAM));
    }
  }
  const metadata = seriesMetadata({ ...HEAD, aggregate: 'PT1H' });
  t.same([...metadata.keys()], ['tubeIdentifier', 'from', 'to', 'aggregate', 'unit', 'verticalDatum']);
});

t.test('the cut-off guard: a cut between chunks ends inside a message, and is refused', async (t) => {
  const documents = {
    series: () => {
      const writer = arrow.series();
      return { writer, chunks: [writer.head(HEAD), writer.batch(batchOf(ROWS), true)] };
    },
    network: () => {
      const writer = arrow.network();
      const opening = writer.open({ from: HEAD.from, to: HEAD.to, syncToken: 'token' }, [HEAD]);
      return { writer, chunks: [opening, writer.head(HEAD), writer.batch(batchOf(ROWS), true)] };
    },
  };
  for (const [kind, document] of Object.entries(documents)) {
    const { writer, chunks } = document();
    const unguarded = Buffer.concat(chunks);
    t.equal(
      tableFromIPC(unguarded).numRows,
      2,
      `${kind}: unguarded, a cut at a message boundary reads as whole`,
    );
    const guard = new CutOffGuard(writer);
    const passed = chunks.map((chunk) => guard.pass(chunk));
    const cut = Buffer.concat(passed);
    // A cut after any chunk the guard passes ends inside a message.
    for (let end = 1; end <= passed.length; end++) {
      const body = Buffer.concat(passed.slice(0, end));
      t.throws(() => tableFromIPC(body), `${kind}: apache-arrow refuses a cut after chunk ${end}`);
      t.throws(() => pl.readIPCStream(body), `${kind}: polars refuses a cut after chunk ${end}`);
    }
    t.throws(() => tableFromIPC(cut), `${kind}: apache-arrow refuses the guarded cut`);
    t.throws(() => pl.readIPCStream(cut), `${kind}: polars refuses it`);
    const whole = Buffer.concat([cut, guard.close(writer.close())]);
    t.ok(whole.equals(Buffer.concat([unguarded, writer.close()])), `${kind}: with the close, the same bytes`);
    t.equal(tableFromIPC(whole).numRows, 2, `${kind}: whole`);
    t.equal(pl.readIPCStream(whole).height, 2);
  }
});

t.test('dictionary-encoded utf8 columns: sent once, int32 indices, read by both readers', async (t) => {
  const tubes = ['0b7f6e1c-2f4a-4c3e-9d51-1a2b3c4d5e01', '0b7f6e1c-2f4a-4c3e-9d51-1a2b3c4d5e02'];
  const units = ['m', 'cm, "local"', 'ü'];
  const fields = [dictionaryField('tubeIdentifier', 0), ...batchFields(COLUMNS), dictionaryField('unit', 1)];
  const first = batchOf([
    { observedAt: '2024-01-01T00:00:00Z', value: 1.5 },
    { observedAt: '2024-01-01T00:01:00Z', value: -2 },
  ]);
  const second = batchOf([{ observedAt: '2024-01-01T00:00:00.000001Z', value: 1e-7 }]);
  // A dictionary column before the batch columns and one after them, as the network endpoint's schema has.
  const stream = Buffer.concat([
    schemaMessage(fields, new Map([['from', HEAD.from]])),
    dictionaryBatchMessage(0, tubes),
    dictionaryBatchMessage(1, units),
    recordBatchMessage(
      first,
      COLUMNS,
      [{ indices: Int32Array.of(0, 0) }],
      [{ indices: Int32Array.of(0, 2) }],
    ),
    recordBatchMessage(second, COLUMNS, [{ indices: Int32Array.of(1) }], [{ indices: Int32Array.of(1) }]),
    END_OF_STREAM,
  ]);
  const expected = [
    { tubeIdentifier: tubes[0], value: 1.5, unit: 'm' },
    { tubeIdentifier: tubes[0], value: -2, unit: 'ü' },
    { tubeIdentifier: tubes[1], value: 1e-7, unit: 'cm, "local"' },
  ];
  const table = tableFromIPC(stream);
  t.same(
    table.schema.fields.map((field) => [field.name, String(field.type), field.nullable]),
    [
      ['tubeIdentifier', 'Dictionary<Int32, Utf8>', false],
      ['observedAt', 'Timestamp<MICROSECOND, UTC>', false],
      ['value', 'Float64', false],
      ['unit', 'Dictionary<Int32, Utf8>', false],
    ],
  );
  t.same(
    table.toArray().map((row) => ({ tubeIdentifier: row.tubeIdentifier, value: row.value, unit: row.unit })),
    expected,
  );
  t.same(
    [...table.getChild('observedAt')!.data.flatMap((data) => [...(data.values as BigInt64Array)])],
    [1_704_067_200_000_000n, 1_704_067_260_000_000n, 1_704_067_200_000_001n],
  );
  const frame = pl.readIPCStream(stream);
  t.same(frame.columns, ['tubeIdentifier', 'observedAt', 'value', 'unit']);
  t.same(
    frame.select('tubeIdentifier', 'value', 'unit').toRecords(),
    expected,
    'polars reads the dictionaries',
  );
});

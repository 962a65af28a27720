import { Readable } from 'node:stream';
import t from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import {
  importMeasurements,
  type MeasurementsImported,
} from '../../../src/importers/measurements/measurements.js';
import { HEADER, OTHER, registeredDatabase, TUBE } from '../../helpers/importFixtures.js';

const UNKNOWN = '99999999-2fa1-11d2-883f-0016d3cca427';

function importText(sql: Sql, csv: string | Buffer): Promise<MeasurementsImported> {
  return importMeasurements(sql, Readable.from([Buffer.from(csv)]), { name: 'data.csv' });
}

/** The error lines the operator would see, or a failure when the import succeeded. */
async function rejection(sql: Sql, csv: string | Buffer): Promise<string[]> {
  const error = await importText(sql, csv).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ImportRejected))
    throw new Error(`expected the file to be refused, got ${String(error)}`);
  return error.report().trimEnd().split('\n');
}

/** The stored series as "tube observedAt value" text, in order. */
async function stored(sql: Sql): Promise<string[]> {
  const rows = await sql<{ row: string }[]>`
    select t.identifier || ' ' || to_char(m.observed_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || ' ' || measurement_value(m.value, m.value_thousandths)::text as row
    from measurements m join tubes t on t.id = m.tube_id order by t.identifier, m.observed_at`;
  return rows.map((r) => r.row);
}

t.test('a good file is imported, offsets normalised and microseconds kept', async (t) => {
  const sql = await registeredDatabase(t);
  const result = await importText(
    sql,
    `${HEADER}${TUBE},2024-01-01T02:00:00+02:00,-1.23\n${TUBE},2024-01-01T00:00:01.000001Z,0.1\n` +
      `${OTHER.toUpperCase()},2024-01-01t00:00:00z,123456789.012345\n`,
  );
  t.same(result, { rows: 3, inserted: 3, updated: 0, unchanged: 0 });
  t.same(await stored(sql), [
    `${TUBE} 2024-01-01T00:00:00.000000Z -1.23`,
    `${TUBE} 2024-01-01T00:00:01.000001Z 0.1`,
    `${OTHER} 2024-01-01T00:00:00.000000Z 123456789.012345`,
  ]);
});

t.test('each kind of bad row is reported as FILE:LINE: field: reason', async (t) => {
  const sql = await registeredDatabase(t);
  const cases: [string, string, string][] = [
    ['bad UUID', `${TUBE.slice(1)},2024-01-01T00:00:00Z,1`, 'tubeIdentifier: not a UUID'],
    ['non-hex UUID', `${TUBE.replace('1', 'g')},2024-01-01T00:00:00Z,1`, 'tubeIdentifier: not a UUID'],
    [
      'unknown tube',
      `${UNKNOWN},2024-01-01T00:00:00Z,1`,
      'tubeIdentifier: no tube with this identifier is registered (gwapi import registry)',
    ],
    [
      'timestamp without offset',
      `${TUBE},2024-01-01T00:00:00,1`,
      'observedAt: must be an RFC 3339 date-time with a UTC offset, such as 2024-01-01T00:00:00Z or 2024-01-01T02:00:00+02:00',
    ],
    ['impossible date', `${TUBE},2023-02-29T00:00:00Z,1`, 'observedAt: day 29 does not exist in 2023-02'],
    [
      'non-numeric value',
      `${TUBE},2024-01-01T00:00:00Z,1,5`.replace('1,5', '1;5'),
      'value: not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)',
    ],
    ['empty value', `${TUBE},2024-01-01T00:00:00Z,`, 'value: is empty'],
    [
      'NaN',
      `${TUBE},2024-01-01T00:00:00Z,NaN`,
      'value: not a finite number (NaN and Infinity are not measurements)',
    ],
    [
      '-Infinity',
      `${TUBE},2024-01-01T00:00:00Z,-Infinity`,
      'value: not a finite number (NaN and Infinity are not measurements)',
    ],
    ['overflow', `${TUBE},2024-01-01T00:00:00Z,1e400`, 'value: out of the range of double precision'],
    ['underflow', `${TUBE},2024-01-01T00:00:00Z,1e-400`, 'value: out of the range of double precision'],
    [
      '16 significant digits',
      `${TUBE},2024-01-01T00:00:00Z,1234567890.123456`,
      'value: has 16 significant digits; at most 15 are stored exactly (double precision), more would be rounded',
    ],
    [
      'too few fields',
      `${TUBE},2024-01-01T00:00:00Z`,
      'row: expected 3 fields (tubeIdentifier,observedAt,value), found 2',
    ],
    [
      'too many fields',
      `${TUBE},2024-01-01T00:00:00Z,1,2`,
      'row: expected 3 fields (tubeIdentifier,observedAt,value), found 4',
    ],
    ['empty line', '', 'row: empty line'],
    [
      'unterminated quote',
      `"${TUBE},2024-01-01T00:00:00Z,1`,
      'row: unterminated quoted field (a field cannot span lines)',
    ],
    ['text after a quote', `"${TUBE}"x,2024-01-01T00:00:00Z,1`, 'row: text after a closing quote'],
  ];
  for (const [name, row, expected] of cases) {
    // The bad row sits between good rows (line 3 of 4), which must not be imported either.
    const csv = `${HEADER}${TUBE},2023-01-01T00:00:00Z,1\n${row}\n${TUBE},2023-01-02T00:00:00Z,2\n`;
    t.same(await rejection(sql, csv), [`data.csv:3: ${expected}`], name);
  }
  t.same(await stored(sql), [], 'nothing was imported');
});

t.test('a row with several bad fields reports each of them', async (t) => {
  const sql = await registeredDatabase(t);
  t.same(await rejection(sql, `${HEADER}nope,yesterday,many\n`), [
    'data.csv:2: tubeIdentifier: not a UUID',
    'data.csv:2: observedAt: must be an RFC 3339 date-time with a UTC offset, such as 2024-01-01T00:00:00Z or 2024-01-01T02:00:00+02:00',
    'data.csv:2: value: not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)',
  ]);
});

t.test('the header must be exactly tubeIdentifier,observedAt,value (and status)', async (t) => {
  const sql = await registeredDatabase(t);
  const expected =
    'expected exactly tubeIdentifier,observedAt,value or tubeIdentifier,observedAt,value,status';
  t.same(await rejection(sql, `tubeIdentifier,value,observedAt\n${TUBE},1,2024-01-01T00:00:00Z\n`), [
    `data.csv:1: header: ${expected}, found "tubeIdentifier,value,observedAt"`,
  ]);
  t.same(await rejection(sql, `${TUBE},2024-01-01T00:00:00Z,1\n`), [
    `data.csv:1: header: ${expected}, found "${TUBE},2024-01-01T00:00:00Z,1"`,
  ]);
  t.same(
    await rejection(sql, `tubeIdentifier,observedAt,value,Status\n${TUBE},2024-01-01T00:00:00Z,1,approved\n`),
    [`data.csv:1: header: ${expected}, found "tubeIdentifier,observedAt,value,Status"`],
  );
  t.same(await rejection(sql, `"tubeIdentifier,observedAt",value\n${TUBE},2024-01-01T00:00:00Z,1\n`), [
    `data.csv:1: header: ${expected}, found "\\"tubeIdentifier,observedAt\\",value"`,
  ]);
  t.same(await rejection(sql, ''), ['data.csv:1: header: missing: the input is empty']);
});

t.test('duplicates within the file are found across offsets and name the first line', async (t) => {
  const sql = await registeredDatabase(t);
  const csv =
    `${HEADER}${TUBE},2024-01-01T00:00:00Z,1\n${OTHER},2024-01-01T00:00:00Z,1\n` +
    `${TUBE},2024-01-01T02:00:00+02:00,2\n${TUBE},2024-01-01T00:00:00.000001Z,3\n${TUBE.toUpperCase()},2023-12-31T23:00:00-01:00,4\n`;
  t.same(await rejection(sql, csv), [
    'data.csv:4: observedAt: the same tube and instant as line 2 (a tube has one value per instant)',
    'data.csv:6: observedAt: the same tube and instant as line 2 (a tube has one value per instant)',
  ]);
  t.same(await stored(sql), []);
});

t.test('errors found in Node and in SQL are merged by line', async (t) => {
  const sql = await registeredDatabase(t);
  const csv =
    `${HEADER}${TUBE},2024-01-01T00:00:00Z,1\n${UNKNOWN},2024-01-01T00:00:00Z,1\n` +
    `${TUBE},2024-01-01T00:00:00Z,x\n${TUBE},2024-01-01T00:00:00Z,2\n`;
  t.same(await rejection(sql, csv), [
    'data.csv:3: tubeIdentifier: no tube with this identifier is registered (gwapi import registry)',
    'data.csv:4: value: not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)',
    'data.csv:5: observedAt: the same tube and instant as line 2 (a tube has one value per instant)',
  ]);
});

t.test('more than 20 errors: the first 20 by line, then how many more', async (t) => {
  const sql = await registeredDatabase(t);
  const rows: string[] = [];
  for (let i = 0; i < 1500; i++) {
    // Alternate Node-found (bad value) and SQL-found (unknown tube) errors, so the merge is exercised.
    const at = `2024-01-01T00:00:00.${String(i).padStart(6, '0')}Z`;
    rows.push(i % 2 === 0 ? `${TUBE},${at},bad` : `${UNKNOWN},${at},1`);
  }
  const report = await rejection(sql, `${HEADER}${rows.join('\n')}\n`);
  t.equal(report.length, 21);
  t.match(report[0], /^data\.csv:2: value: not a decimal number/);
  t.equal(
    report[1],
    'data.csv:3: tubeIdentifier: no tube with this identifier is registered (gwapi import registry)',
  );
  t.match(report[19], /^data\.csv:21: tubeIdentifier: no tube/);
  t.equal(report[20], '… and 1,480 more errors');
});

t.test('atomic: a bad last row leaves the database unchanged', async (t) => {
  const sql = await registeredDatabase(t);
  await importText(sql, `${HEADER}${TUBE},2024-01-01T00:00:00Z,1\n`);
  const before = await stored(sql);
  const rows = Array.from(
    { length: 5000 },
    (_, i) => `${TUBE},2024-02-01T00:00:00.${String(i).padStart(6, '0')}Z,${i}`,
  );
  t.same(
    await rejection(
      sql,
      `${HEADER}${TUBE},2024-01-01T00:00:00Z,7\n${rows.join('\n')}\n${TUBE},2024-03-01T00:00:00Z,oops`,
    ),
    [
      'data.csv:5003: value: not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)',
    ],
  );
  t.same(await stored(sql), before);
});

t.test('re-importing the same file changes nothing; a corrected value replaces the old one', async (t) => {
  const sql = await registeredDatabase(t);
  const csv = `${HEADER}${TUBE},2024-01-01T00:00:00Z,1.5\n${TUBE},2024-01-01T00:15:00Z,1.6\n${OTHER},2024-01-01T00:00:00Z,2\n`;
  t.same(await importText(sql, csv), { rows: 3, inserted: 3, updated: 0, unchanged: 0 });
  const versions = () =>
    sql`select tube_id, observed_at, measurement_value(value, value_thousandths) as value, xmin::text from measurements order by 1, 2`;
  const before = await versions();
  t.same(await importText(sql, csv), { rows: 3, inserted: 0, updated: 0, unchanged: 3 });
  t.same(await versions(), before, 'no row was rewritten: every xmin is the same');

  const corrected = `${HEADER}${TUBE},2024-01-01T01:15:00+01:00,1.7\n${TUBE},2024-01-01T00:30:00Z,1.8\n`;
  t.same(await importText(sql, corrected), { rows: 2, inserted: 1, updated: 1, unchanged: 0 });
  t.same(await stored(sql), [
    `${TUBE} 2024-01-01T00:00:00.000000Z 1.5`,
    `${TUBE} 2024-01-01T00:15:00.000000Z 1.7`,
    `${TUBE} 2024-01-01T00:30:00.000000Z 1.8`,
    `${OTHER} 2024-01-01T00:00:00.000000Z 2`,
  ]);
});

t.test('values round-trip exactly, as text and as JavaScript numbers', async (t) => {
  const sql = await registeredDatabase(t);
  const values = [
    '-1.23',
    '0.1',
    '123456789.012345',
    '0',
    '-0.000001',
    '1e-300',
    '9.99999999999999e307',
    '2.5E3',
    '+4',
    '100.000',
  ];
  const csv = `${HEADER}${values.map((v, i) => `${TUBE},2024-01-01T00:00:0${i}Z,${v}`).join('\n')}\n`;
  await importText(sql, csv);
  const rows = await sql<{ text: string; value: number }[]>`
    select measurement_value(value, value_thousandths)::text as text, measurement_value(value, value_thousandths) as value from measurements order by observed_at`;
  t.same(
    rows.map((r) => r.text),
    [
      '-1.23',
      '0.1',
      '123456789.012345',
      '0',
      '-1e-06',
      '1e-300',
      '9.99999999999999e+307',
      '2500',
      '4',
      '100',
    ],
  );
  t.same(
    rows.map((r) => r.value),
    values.map(Number),
  );
  t.equal(rows[2]?.value, 123456789.012345);
});

t.test('tolerates a BOM, CRLF line ends, quoted fields and a missing final newline', async (t) => {
  const sql = await registeredDatabase(t);
  const csv =
    `\uFEFF"tubeIdentifier","observedAt","value"\r\n"${TUBE}","2024-01-01T00:00:00Z","1.5"\r\n` +
    `${TUBE},"2024-01-01T00:01:00Z",1.6\r\n${TUBE},2024-01-01T00:02:00Z,1.7`;
  t.same(await importText(sql, csv), { rows: 3, inserted: 3, updated: 0, unchanged: 0 });
  t.same(
    (
      await sql`select measurement_value(value, value_thousandths) as value from measurements order by observed_at`
    ).map((r) => r.value),
    [1.5, 1.6, 1.7],
  );
  t.same(await rejection(sql, `${HEADER}"${TUBE}","2024-01-01T00:00:00Z","1""5"\n`), [
    'data.csv:2: value: not a decimal number (expected digits with an optional sign, point and exponent, like -1.23 or 4.5e-3)',
  ]);
});

t.test('lines split across stream chunks are put back together', async (t) => {
  const sql = await registeredDatabase(t);
  const rows = Array.from(
    { length: 300 },
    (_, i) => `${TUBE},2024-01-01T00:00:00.${String(i).padStart(3, '0')}Z,${i}.25`,
  );
  const bytes = Buffer.from(`\uFEFF${HEADER}${rows.join('\r\n')}\r\n`);
  // Chunks of 7 bytes split lines, CRLF pairs and the 3-byte BOM and so exercise every seam.
  const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) =>
    bytes.subarray(i * 7, i * 7 + 7),
  );
  const result = await importMeasurements(sql, Readable.from(chunks), { name: 'data.csv' });
  t.equal(result.inserted, 300);
  const [sum] = await sql<
    { sum: number }[]
  >`select sum(measurement_value(value, value_thousandths)) as sum from measurements`;
  t.equal(sum?.sum, (299 * 300) / 2 + 300 * 0.25);
});

t.test(
  'unknown tubes are found whether or not the file has more distinct tubes than are remembered',
  async (t) => {
    const sql = await registeredDatabase(t);
    const csv = `${HEADER}${TUBE},2024-01-01T00:00:00Z,1\n${UNKNOWN},2024-01-01T00:00:00Z,1\n${OTHER},2024-01-01T00:00:00Z,1\n`;
    for (const maxKeptTubes of [100, 1]) {
      const error = await importMeasurements(sql, Readable.from([Buffer.from(csv)]), {
        name: 'data.csv',
        maxKeptTubes,
      }).catch((e: unknown) => e);
      t.ok(error instanceof ImportRejected, `remembering ${maxKeptTubes}`);
      t.same((error as ImportRejected).errors, [
        {
          line: 3,
          field: 'tubeIdentifier',
          reason: 'no tube with this identifier is registered (gwapi import registry)',
        },
      ]);
    }
  },
);

t.test('a line too long to be a row stops the import at once (it must not fill memory)', async (t) => {
  const sql = await registeredDatabase(t);
  const endless = Readable.from(
    (function* () {
      yield Buffer.from(`${HEADER}${TUBE},2024-01-01T00:00:00Z,1\n`);
      for (let i = 0; i < 1000; i++) yield Buffer.alloc(1024, 'x');
    })(),
  );
  const error = await importMeasurements(sql, endless, { name: 'data.csv' }).catch((e: unknown) => e);
  t.ok(error instanceof ImportRejected);
  t.equal(
    (error as ImportRejected).report(),
    'data.csv:3: row: longer than 65,536 characters (is this the right file?)\n',
  );
  t.same(await stored(sql), []);
});

t.test('a file with only the header imports nothing and succeeds', async (t) => {
  const sql = await registeredDatabase(t);
  t.same(await importText(sql, HEADER), { rows: 0, inserted: 0, updated: 0, unchanged: 0 });
  t.same(await importText(sql, HEADER.trimEnd()), { rows: 0, inserted: 0, updated: 0, unchanged: 0 });
});

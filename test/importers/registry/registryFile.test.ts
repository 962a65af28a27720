/** `gwapi import registry FILE` as the operator runs it: a real process, a real file, a fresh database. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Sql } from '../../../src/db/connect.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { importRegistryFile } from '../../../src/importers/registry/registryFile.js';
import { runCli } from '../../helpers/cli.js';
import { freshDatabase } from '../../helpers/database.js';

const A1 = '0a000000-0000-4000-8000-000000000001';
const A2 = '0a000000-0000-4000-8000-000000000002';
const B1 = '0b000000-0000-4000-8000-000000000001';

/** A database and a folder; `gwapi(file contents)` writes registry.json there and imports it. */
async function setUp(t: Test) {
  const db = await freshDatabase(t);
  const file = join(t.testdir(), 'registry.json');
  const gwapi = async (contents: string) => {
    await writeFile(file, contents);
    const result = await runCli(['import', 'registry', file], { env: { DATABASE_URL: db.url } });
    // Messages name the file as given; shown here as the operator's `registry.json`.
    const short = (text: string) => text.replaceAll(file, 'registry.json');
    return { ...result, stdout: short(result.stdout), stderr: short(result.stderr) };
  };
  const tubes = async () =>
    (
      await db.sql<{ row: string }[]>`
        select w.name || '/' || t.number || ' ' || t.identifier || ' ' || t.unit || ' ' || t.vertical_datum as row
        from tubes t join wells w on w.id = t.well_id order by w.name, t.number`
    ).map((r) => r.row);
  return { db, gwapi, tubes };
}

/** Pretty-printed like an operator's file, so the line of every field is predictable. */
const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const GOOD = [
  {
    name: 'A',
    tubes: [
      { identifier: A1, number: '1' },
      { identifier: A2, number: '2', unit: 'cm' },
    ],
  },
  { name: 'B', tubes: [{ identifier: B1, number: '1', verticalDatum: 'MSL' }] },
];

t.test('imports a registry and says how much', async (t) => {
  const { gwapi, tubes } = await setUp(t);
  const result = await gwapi(pretty(GOOD));
  t.same(result, { code: 0, stdout: 'imported 2 wells and 3 tubes from registry.json\n', stderr: '' });
  t.same(await tubes(), [`A/1 ${A1} m NAP`, `A/2 ${A2} cm NAP`, `B/1 ${B1} m MSL`]);
  t.equal((await gwapi(pretty(GOOD))).code, 0, 'importing it again is fine');
  t.same(await tubes(), [`A/1 ${A1} m NAP`, `A/2 ${A2} cm NAP`, `B/1 ${B1} m MSL`]);
});

t.test('a refused file: its errors on stderr, then one summary line, exit 1, nothing imported', async (t) => {
  const { gwapi, tubes } = await setUp(t);
  await gwapi(pretty(GOOD));
  const before = await tubes();
  const result = await gwapi(pretty([{ name: 'C', tubes: [{ identifier: 'x', number: '1' }] }, ...GOOD]));
  t.same(result, {
    code: 1,
    stdout: '',
    stderr:
      'registry.json:6: [0].tubes[0].identifier: not a UUID\n' +
      'gwapi: registry.json: 1 error; nothing was imported\n',
  });
  t.same(await tubes(), before);
});

/** The database behind the in-process refusal tests (a CLI process per case would be slow). */
const root = t;
let shared: Promise<{ sql: Sql; dir: string }> | undefined;

/** Imports `contents` into a database holding GOOD, expects refusal with `errors`, and no change. */
async function refused(t: Test, contents: string, errors: string[]) {
  shared ??= (async () => {
    const { sql } = await freshDatabase(root);
    await upsertRegistry(sql, GOOD);
    return { sql, dir: root.testdir() };
  })();
  const { sql, dir } = await shared;
  const before = await sql`select * from tubes order by id`;
  const file = join(dir, 'registry.json');
  await writeFile(file, contents);
  const error = await importRegistryFile(sql, file).catch((e: unknown) => e);
  if (!(error instanceof ImportRejected)) throw new Error(`expected a refusal, got ${String(error)}`);
  t.same(error.report().replaceAll(file, 'registry.json').trimEnd().split('\n'), errors);
  t.equal(
    error.message,
    `${file}: ${errors.length} ${errors.length === 1 ? 'error' : 'errors'}; nothing was imported`,
  );
  t.same(await sql`select * from tubes order by id`, before, 'nothing changed');
}

t.test('JSON syntax errors name their line', async (t) => {
  await t.test('missing comma', (t) =>
    refused(t, `[\n  {\n    "name": "A"\n    "tubes": []\n  }\n]\n`, ["registry.json:4: JSON: expected ','"]),
  );
  await t.test('trailing comma', (t) =>
    refused(t, `[\n  { "name": "A", "tubes": [] },\n]\n`, ['registry.json:3: JSON: expected a value']),
  );
  await t.test('comment', (t) =>
    refused(t, `// wells\n[]\n`, ['registry.json:1: JSON: comments are not allowed in JSON']),
  );
  await t.test('unterminated string', (t) =>
    refused(t, `[\n  { "name": "A, "tubes": [] }\n]\n`, ['registry.json:2: JSON: unexpected character']),
  );
  await t.test('empty file', (t) => refused(t, '', ['registry.json:1: JSON: expected a value']));
  await t.test('duplicate key', (t) =>
    refused(t, `[\n  {\n    "name": "A",\n    "name": "B",\n    "tubes": []\n  }\n]\n`, [
      'registry.json:4: JSON: duplicate key "name"',
    ]),
  );
});

t.test('shape errors name the line and the field', async (t) => {
  const wells = [
    ...GOOD,
    { name: 'C', tubes: [] },
    { name: 'D', tubes: [{ identifier: 'not-a-uuid', number: '1' }] },
  ];
  await refused(t, pretty(wells).replace('"not-a-uuid"', '"0a000000-0000-4000-8000-00000000000g"'), [
    'registry.json:34: [3].tubes[0].identifier: not a UUID',
  ]);
  await refused(
    t,
    pretty([
      { name: '', tubes: [{ number: 1, identifier: A1, colour: 'red' }] },
      { name: 'E' },
      'F',
      { name: 'G', tubes: {} },
    ]),
    [
      'registry.json:3: [0].name: a well name must not be empty',
      'registry.json:6: [0].tubes[0].number: must be a string',
      'registry.json:8: [0].tubes[0].colour: unknown field',
      'registry.json:12: [1].tubes: is missing',
      'registry.json:15: [2]: must be an object',
      'registry.json:18: [3].tubes: must be an array of tubes',
    ],
  );
  await refused(t, '{"name": "A", "tubes": []}', ['registry.json:1: (top level): must be an array of wells']);
});

t.test('locations and elevations: each refusal names its line and value', async (t) => {
  const tube = (fields: Record<string, unknown>) => ({ identifier: A1, number: '1', ...fields });
  await refused(
    t,
    pretty([
      { name: 'A', location: { longitude: 180.5, latitude: -90.01 }, tubes: [] },
      { name: 'B', location: { longitude: '5' }, tubes: [] },
      { name: 'C', location: [5, 52], tubes: [] },
      { name: 'D', location: { longitude: 5, latitude: 52, altitude: 3 }, tubes: [] },
      { name: 'E', tubes: [tube({ groundLevel: '1.5', tubeTop: null })] },
    ]).replace('"latitude": 52,', '"latitude": 1e999,'),
    [
      'registry.json:5: [0].location.longitude: must be within [-180, 180]',
      'registry.json:6: [0].location.latitude: must be within [-90, 90]',
      // A missing field has no line of its own: its object's.
      'registry.json:12: [1].location.latitude: is missing',
      'registry.json:13: [1].location.longitude: must be a finite number',
      'registry.json:19: [2].location: must be an object',
      'registry.json:29: [3].location.latitude: must be a finite number',
      'registry.json:30: [3].location.altitude: unknown field',
      'registry.json:40: [4].tubes[0].groundLevel: must be a finite number',
      'registry.json:41: [4].tubes[0].tubeTop: must be a finite number',
    ],
  );
  await refused(
    t,
    pretty([
      {
        name: 'A',
        tubes: [
          tube({ screenTop: -1 }),
          tube({ identifier: A2, number: '2', screenBottom: -1 }),
          tube({ identifier: B1, number: '3', screenTop: -2, screenBottom: -2, tubeTop: -3 }),
        ],
      },
    ]),
    [
      'registry.json:8: [0].tubes[0].screenTop: is given without screenBottom: give both or neither',
      'registry.json:13: [0].tubes[1].screenBottom: is given without screenTop: give both or neither',
      'registry.json:18: [0].tubes[2].screenTop: must be above screenBottom (-2)',
      'registry.json:20: [0].tubes[2].tubeTop: must not be below screenTop (-2)',
    ],
  );
});

t.test('duplicates in the file name both places', async (t) => {
  const wells = [
    {
      name: 'A',
      tubes: [
        { identifier: A1, number: '1' },
        { identifier: A2, number: '1' },
      ],
    },
    { name: 'A', tubes: [{ identifier: A1.toUpperCase(), number: '9' }] },
  ];
  await refused(t, pretty(wells), [
    'registry.json:11: [0].tubes[1].number: duplicate tube number "1" in well "A" (first at [0].tubes[0].number, line 7)',
    'registry.json:16: [1].name: duplicate well name "A" (first at [0].name, line 3)',
    'registry.json:19: [1].tubes[0].identifier: duplicate tube identifier (first at [0].tubes[0].identifier, line 6)',
  ]);
});

t.test('a (well, number) held by a tube the file does not list is refused', async (t) => {
  const other = '0c000000-0000-4000-8000-000000000001';
  await refused(
    t,
    pretty([
      { name: 'New', tubes: [] },
      { name: 'B', tubes: [{ identifier: other, number: '1' }] },
    ]),
    [
      `registry.json:11: [1].tubes[0].number: well "B" already has tube number "1" with identifier ${B1}, which this file does not list`,
    ],
  );
});

t.test('a file that cannot be read is one line and exit 1', async (t) => {
  const db = await freshDatabase(t);
  const result = await runCli(['import', 'registry', '/nonexistent/registry.json'], {
    env: { DATABASE_URL: db.url },
  });
  t.same(result, {
    code: 1,
    stdout: '',
    stderr: 'gwapi: cannot read /nonexistent/registry.json: no such file\n',
  });
});

/**
 * The recipes of the network endpoint in docs/clients.md, run as they stand there against a real server
 * with rows imported by the real importer: the year in polars (Arrow) and in pandas (CSV) holds every
 * measurement of the data, value for value and to the microsecond; the nightly sync (curl, pandas) takes
 * only the changes after the first run, and its copy equals a full pull after imports, a status change, a
 * removal, and a 410.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parseInstant } from '../../../src/domain/datetime.js';
import { removeMeasurements, setStatus } from '../../../src/importers/measurements/corrections.js';
import { addKey, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { recipe } from '../../helpers/clientGuide.js';
import { rowImporter } from '../../helpers/importFixtures.js';
import { runNodeScript, typeCheckFolder } from '../../helpers/packageBin.js';

const PYTHON = '/usr/bin/python3';
const pandasMissing = spawnSync(PYTHON, ['-c', 'import pandas']).status !== 0;

/** A measurement as the tests compare them: tube, microseconds since 1970, value. */
type Row = [tube: string, micros: number, value: number];

const micros = (instant: string) => {
  const [, whole, fraction = ''] = /^(.*?)(?:\.(\d+))?Z$/.exec(instant)!;
  return Date.parse(`${whole}Z`) * 1000 + Number(fraction.padEnd(6, '0'));
};

/** The rows of a CSV file as pandas reads it (parse_dates=["observedAt"]), in the file's order. */
const PANDAS_ROWS = `
import json, pandas
def rows(frame):
    return [[t, int(at.value // 1000), v] for t, at, v in zip(frame.tubeIdentifier, frame.observedAt, frame.value)]
`;

/** In the copy's order: by tube identifier, then time. */
const sorted = (rows: Row[]) =>
  [...rows].sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));

t.test('the client guide recipes of the network endpoint', async (t) => {
  const api = await startApi(t, { env: { KEY_CACHE_SECONDS: '0', LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const [one, two] = await addWell(sql, 'W', [{ number: '1' }, { number: '2' }]);
  const [hidden] = await addWell(sql, 'X', [{ number: '1' }]);
  const { key } = await addKey(sql, { tubeIds: [one!.id, two!.id] });
  const [TUBE, OTHER, HIDDEN] = [one!.identifier, two!.identifier, hidden!.identifier];
  const importRows = rowImporter(sql);
  // Fractions of a second, values that print long, and rows outside the year and of a tube not readable.
  const year: [string, string, string][] = [
    [TUBE, '2024-01-01T00:00:00Z', '-1.23'],
    [TUBE, '2024-03-31T01:30:00.000001Z', '0.1'],
    [TUBE, '2024-12-31T23:59:59.999999Z', '123456.789012345'],
    [OTHER, '2024-06-01T12:00:00.5Z', '-0.000001'],
    [OTHER, '2024-06-02T12:00:00Z', '7'],
  ];
  await importRows([
    ...year,
    [TUBE, '2023-12-31T23:59:59.999999Z', '1'],
    [OTHER, '2025-01-01T00:00:00Z', '2'],
    [HIDDEN, '2024-05-05T00:00:00Z', '3'],
  ]);
  const asRows = (rows: [string, string, string][]): Row[] =>
    rows.map(([tube, at, value]) => [tube, micros(at), Number(value)]);
  // Discovery's order: well W, tubes 1 then 2.
  const expected = asRows(year);
  const env = { BASE: `${api.base}/v1`, KEY: key };

  t.test('the year in polars, from Arrow', async (t) => {
    const directory = t.testdir({
      'year.ts': recipe('year.ts'),
      'frame.mts': `import pl from 'nodejs-polars';
import { year } from './year.ts';
const rows = year.select(pl.col('tubeIdentifier').cast(pl.Utf8), pl.col('observedAt').cast(pl.Int64), pl.col('value'));
console.log(JSON.stringify({ schema: String(year.schema.observedAt), rows: rows.toRecords().map(Object.values) }));
`,
    });
    const { code, reported } = await typeCheckFolder(directory);
    t.same(reported, [], 'the recipe passes strict tsc');
    t.equal(code, 0);
    const { code: exit, stdout, stderr } = await runNodeScript(join(directory, 'frame.mts'), [], env);
    t.equal(exit, 0, stderr);
    const frame = JSON.parse(stdout);
    t.equal(frame.schema, 'DataType(Datetime(us,UTC))', 'observedAt: datetime[μs, UTC]');
    t.same(frame.rows, expected, 'every measurement of the year, in discovery order, nothing else');
  });

  const skip = pandasMissing && !process.env.CI && `${PYTHON} has no pandas (Debian package python3-pandas)`;
  // Asynchronously: the server answering runs in this process.
  const python = async (script: string, cwd: string) =>
    (await promisify(execFile)(PYTHON, ['-c', `${PANDAS_ROWS}${script}`], { env, cwd })).stdout;

  t.test('the year in pandas, from CSV', { skip }, async (t) => {
    const directory = t.testdir({ 'year.py': recipe('year.py') });
    const out = await python(
      'import runpy\nyear = runpy.run_path("year.py")["year"]\nprint(json.dumps([str(year.observedAt.dtype), rows(year)]))',
      directory,
    );
    t.same(JSON.parse(out), ['datetime64[ns, UTC]', expected], 'every measurement of the year');
  });

  t.test('the nightly sync keeps its copy equal to a full pull', { skip }, async (t) => {
    const directory = t.testdir({ 'sync.sh': recipe('sync.sh'), 'upsert.py': recipe('upsert.py') });
    const copyRows = async (): Promise<Row[]> =>
      JSON.parse(
        await python(
          'print(json.dumps(rows(pandas.read_csv("copy.csv", parse_dates=["observedAt"]))))',
          directory,
        ),
      );
    const night = async () => {
      // PYTHON's folder first: the `python3` that has pandas.
      await promisify(execFile)('sh', ['sync.sh'], {
        cwd: directory,
        env: { ...env, PATH: `${dirname(PYTHON)}:/bin` },
      });
      const copy = await copyRows();
      const changes = (await readFile(join(directory, 'changes.csv'), 'utf8')).split('\r\n').slice(1, -1);
      const token = (await readFile(join(directory, 'token.txt'), 'utf8')).trim();
      return { copy, changes, token };
    };
    let current = expected;

    const first = await night();
    t.same(first.copy, sorted(current), 'the first night: the whole year');
    t.equal(first.changes.length, current.length);
    t.match(first.token, /^[A-Za-z0-9_-]{1,200}$/, 'a token kept');

    const nothing = await night();
    t.same(nothing.changes, [], 'nothing imported: no change');
    t.same(nothing.copy, first.copy);

    // A new row, a corrected value, a value written again, and rows the copy does not hold.
    const imported: [string, string, string][] = [
      [TUBE, '2024-07-01T00:00:00.25Z', '-2.5'],
      [OTHER, '2024-06-02T12:00:00Z', '7.5'],
      [TUBE, '2024-01-01T00:00:00Z', '-1.23'],
      [HIDDEN, '2024-07-01T00:00:00Z', '4'],
      [TUBE, '2025-02-01T00:00:00Z', '5'],
    ];
    await importRows(imported);
    const second = await night();
    t.same(
      second.changes,
      [
        `${TUBE},2024-07-01T00:00:00.25Z,-2.5,provisional,m,NAP`,
        `${OTHER},2024-06-02T12:00:00Z,7.5,provisional,m,NAP`,
      ],
      'only what changed',
    );
    current = [...asRows([...year.slice(0, 4), imported[0]!, imported[1]!])];
    t.same(second.copy, sorted(current), 'the copy equals a full pull');
    t.not(second.token, first.token, 'a new token kept');

    // The operator approves a row and removes one imported into the wrong tube.
    const day = (text: string) => ({
      from: parseInstant(`${text}T00:00:00Z`),
      to: parseInstant(`${text}T23:59:59Z`),
    });
    t.equal(await setStatus(sql, [TUBE], day('2024-01-01'), 'approved'), 1);
    t.equal(await removeMeasurements(sql, TUBE, day('2024-03-31')), 1);
    const third = await night();
    t.same(
      third.changes,
      [
        `${TUBE},2024-01-01T00:00:00Z,-1.23,approved,m,NAP`,
        `${TUBE},2024-03-31T01:30:00.000001Z,0.1,removed,m,NAP`,
      ],
      'the approval, and the removal with the value it had',
    );
    current = current.filter(
      ([tube, at]) => !(tube === TUBE && at === micros('2024-03-31T01:30:00.000001Z')),
    );
    t.same(third.copy, sorted(current), 'the removed row left the copy, which equals a full pull');

    await sql`update wells set name = 'W renamed' where name = 'W'`;
    const renamed = await night();
    t.equal(renamed.changes.length, current.length, 'the view changed (410): a full pull');
    t.same(renamed.copy, sorted(current), 'the copy equals a full pull');
    await writeFile(join(directory, 'token.txt'), 'altered');
    await t.rejects(night(), 'a token not issued (400): the run fails, the copy is kept');
    t.same(await copyRows(), sorted(current));
  });
});

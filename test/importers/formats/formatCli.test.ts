/**
 * `gwapi import <format> FILE…` as the operator runs it: each file in its own transaction, in order; a
 * refused file reported and the next still imported; the exit status; standard input.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { formatImportWorld } from '../../helpers/formatImport.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (path: string) => new URL(path, FIXTURES).pathname;
const DINO = fixture('dino/B44F0310001.csv');
const OTHER_DINO = fixture('dino/B27D0188002_1.csv');
const FEWS = fixture('fews/levels-m.xml');
/** Levels from 1998 to 2024, two on 2024-02-28. */
const REPEATED = fixture('dino/B32C0211001_1.csv');
const YEAR_2024 = ['2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z'] as const;
/** `imported FILE: …report… in 0.1 s` */
const IMPORTED = /^imported (\S+): (.+) in \d+\.\d s$/;

const reports = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => IMPORTED.exec(line)?.slice(1) ?? line);

t.test('several files: a refused one is reported, the others import whole; exit 1', async (t) => {
  const world = await formatImportWorld(t);
  const { sql } = world.api.db;
  const result = await world.gwapi(['dino', DINO, FEWS, OTHER_DINO]);
  t.equal(result.code, 1);
  const [first, second, ...more] = reports(result.stdout);
  t.same(more, []);
  t.equal(first?.[0], DINO);
  t.equal(
    first?.[1],
    '1 tube stated; 3 points read: 3 provisional written; screen left out (one bound only) of 1 tube',
  );
  t.equal(second?.[0], OTHER_DINO);
  const lines = result.stderr.split('\n');
  t.match(lines[0], new RegExp(`^${FEWS}:\\d+: `), 'the refused file, with its line');
  t.equal(lines.at(-3), `gwapi: ${FEWS}: 1 error; nothing was imported`);
  t.equal(lines.at(-2), 'gwapi: 1 of 3 files refused; the others were imported');
  const wells = await world.wells();
  t.same(wells.map((w) => w.name).sort(), ['B27D0188', 'B44F0310'], 'nothing of the FEWS file');
  const [tube] = wells.find((w) => w.name === 'B44F0310')!.tubes;
  t.same(
    (await world.series(tube!.identifier, '2023-01-01T00:00:00Z', '2024-01-01T00:00:00Z')).map(
      (m) => m.value,
    ),
    [9.46],
  );
  const counts = await sql<{ name: string; n: number }[]>`
    select w.name, count(*)::int as n from measurements m join tubes t on t.id = m.tube_id
    join wells w on w.id = t.well_id group by w.name order by w.name`;
  t.same(
    counts.map((c) => [c.name, c.n]),
    [
      ['B27D0188', 2],
      ['B44F0310', 3],
    ],
    'the files before and after the refused one, whole',
  );
});

t.test('again: nothing written, every level unchanged, an empty sync delta; exit 0', async (t) => {
  const world = await formatImportWorld(t);
  const first = await world.gwapi(['dino', REPEATED]);
  t.same(
    { ...first, stdout: reports(first.stdout) },
    {
      code: 0,
      stdout: [
        [REPEATED, '1 tube stated; 6 points read: 4 provisional written; 1 no NAP level, 1 duplicate time'],
      ],
      stderr: '',
    },
  );
  const before = await world.network(...YEAR_2024);
  t.same(
    before.series.map((s) => s.measurements),
    [[{ observedAt: '2024-02-27T23:00:00Z', value: -1.88, status: 'provisional' }]],
    'of the two levels of one day, the later row',
  );
  const again = await world.gwapi(['dino', REPEATED]);
  t.same(
    { ...again, stdout: reports(again.stdout) },
    {
      code: 0,
      stdout: [
        [
          REPEATED,
          '1 tube stated; 6 points read: nothing written, 4 unchanged; 1 no NAP level, 1 duplicate time',
        ],
      ],
      stderr: '',
    },
  );
  t.same((await world.network(...YEAR_2024, before.syncToken)).series, [], 'an empty delta');
});

t.test('one refused file: its errors, one summary line, exit 1; a missing file likewise', async (t) => {
  const world = await formatImportWorld(t);
  const refused = await world.gwapi(['dino', FEWS]);
  t.equal(refused.code, 1);
  t.equal(refused.stdout, '');
  t.match(
    refused.stderr,
    new RegExp(`^${FEWS}:\\d+: .+\\ngwapi: ${FEWS}: 1 error; nothing was imported\\n$`),
  );
  const missing = join(t.testdir(), 'missing.csv');
  const gone = await world.gwapi(['dino', missing, DINO]);
  t.equal(gone.code, 1);
  t.same(
    reports(gone.stdout).map((report) => report[0]),
    [DINO],
  );
  t.equal(
    gone.stderr,
    `gwapi: cannot read ${missing}: no such file\ngwapi: 1 of 2 files refused; the others were imported\n`,
  );
});

t.test('standard input (-), named stdin; twice is refused before anything is read', async (t) => {
  const world = await formatImportWorld(t);
  const result = await world.gwapi(['dino', '-'], await readFile(DINO));
  t.equal(result.code, 0);
  t.match(reports(result.stdout), [['stdin', /^1 tube stated; 3 points read: 3 provisional written/]]);
  const twice = await world.gwapi(['dino', '-', '-'], '');
  t.same(twice, { code: 1, stdout: '', stderr: 'gwapi: standard input (-) can be read once only\n' });
});

t.test('options: a bad time zone or status is refused before any file is read', async (t) => {
  const world = await formatImportWorld(t);
  const dir = t.testdir();
  await copyFile(DINO, join(dir, 'levels.csv'));
  await writeFile(join(dir, 'empty.csv'), '');
  const zone = await world.gwapi(['dino', join(dir, 'levels.csv'), '--timezone', 'Mars/Olympus']);
  t.equal(zone.code, 1);
  t.match(zone.stderr, /--timezone <tz>.*not an IANA time zone/);
  const status = await world.gwapi(['dino', join(dir, 'levels.csv'), '--status', 'good']);
  t.equal(status.code, 1);
  t.match(status.stderr, /--status <status>.*good.*approved, provisional, rejected/);
  t.same(await world.wells(), []);
});

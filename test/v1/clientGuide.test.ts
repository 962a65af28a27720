/**
 * The shell snippets of docs/clients.md and its aggregate recipe, run as they stand there against a real
 * server: each curl line gets what the guide says it gets. The guide's first snippet sets KEY, BASE and
 * TUBE_ID to examples; here they come from the environment instead, and only those lines are left out.
 * Also the recipe of a year of approved measurements. The recipes of the network endpoint and of pandas are run by test/v1/network/recipes.test.ts and
 * test/v1/series/csv.test.ts.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { startApi } from '../helpers/api.js';
import { codeBlocks, isRecipe, recipe } from '../helpers/clientGuide.js';
import { get } from '../helpers/http.js';
import { setStatus } from '../helpers/statuses.js';

const PYTHON = '/usr/bin/python3';
const pandasMissing = spawnSync(PYTHON, ['-c', 'import pandas']).status !== 0;
const YEAR = 'from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';
const HOURS_IN_2024 = 366 * 24;

t.test('the client guide, run', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const [tube, other] = await addWell(sql, 'W', [{ number: '1' }, { number: '2' }]);
  // Every hour of 2024, in UTC and in UTC+01:00: each local day of the aggregate holds 24.
  await addRegularSeries(sql, tube!.id, '2023-12-31T23:00:00Z', '2025-01-01T00:00:00Z', '1 hour');
  const { key } = await addKey(sql, { tubeIds: [tube!.id, other!.id] });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    BASE: `${api.base}/v1`,
    KEY: key,
    TUBE_ID: tube!.identifier,
  };
  const fetched = async (path: string) => (await get(api.base, `/v1${path}`, { 'x-api-key': key })).body;

  t.test('every shell snippet', async (t) => {
    const snippets = codeBlocks('sh').filter((code) => !isRecipe(code));
    t.ok(snippets.length >= 5, `${snippets.length} snippets`);
    const directory = t.testdir({});
    const outputs: string[] = [];
    for (const snippet of snippets) {
      const script = snippet.replace(/^(KEY|BASE|TUBE_ID)=.*\n/gm, '');
      // Asynchronously: the server answering curl runs in this process.
      const { stdout, stderr } = await promisify(execFile)('sh', ['-eu', '-c', script], {
        cwd: directory,
        env,
      });
      t.equal(stderr, '', `no error:\n${snippet}`);
      outputs.push(stdout);
    }
    const all = outputs.join('');
    t.match(all, `"identifier":"${tube!.identifier}"`, 'discovery');
    // A series body, where a snippet's output holds one (after discovery's, in the first).
    const series = outputs.flatMap((out) => {
      const at = out.indexOf('{"tubeIdentifier"');
      return at < 0 ? [] : [JSON.parse(out.slice(at))];
    });
    t.ok(
      series.some((body) => !body.aggregate && body.measurements.length === HOURS_IN_2024),
      'a year of the tube as JSON',
    );
    t.ok(
      series.some((body) => body.aggregate === 'P1D' && body.measurements.length === 366),
      'the year by local day',
    );
    t.ok(outputs.includes('304\n'), 'the conditional request: 304');
    const seriesCsv = await fetched(
      `/groundwater-monitoring-tubes/${tube!.identifier}/measurements?${YEAR}&format=csv`,
    );
    t.ok(outputs.includes(seriesCsv), 'the year as CSV by Accept, compressed on the wire');
    t.same(
      (await readdir(directory)).sort(),
      [
        `${tube!.identifier}_20240101T000000Z_20250101T000000Z.csv`,
        'groundwater-measurements_20240101T000000Z_20250101T000000Z.csv',
        'headers.txt',
        'series.json',
      ],
      'the files the snippets save, under the names the server gives',
    );
    t.equal(
      await readFile(join(directory, `${tube!.identifier}_20240101T000000Z_20250101T000000Z.csv`), 'utf8'),
      seriesCsv,
    );
    t.equal(
      await readFile(
        join(directory, 'groundwater-measurements_20240101T000000Z_20250101T000000Z.csv'),
        'utf8',
      ),
      await fetched(`/groundwater-monitoring-measurements?${YEAR}&format=csv`),
    );
  });

  const skip = pandasMissing && !process.env.CI && `${PYTHON} has no pandas (Debian package python3-pandas)`;
  t.test('the aggregate in pandas', { skip }, async (t) => {
    if (pandasMissing)
      return void t.fail('pandas is missing, and CI must run this test: .ci/run installs it');
    const directory = t.testdir({ 'daily.py': recipe('daily.py') });
    const script = `
import json, runpy
daily = runpy.run_path("daily.py")["daily"]
print(json.dumps([str(daily["observedAt"].dtype), list(daily.columns), len(daily), sorted(set(daily["count"]))]))`;
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], { cwd: directory, env });
    t.same(JSON.parse(stdout), [
      'datetime64[ns, UTC]',
      ['observedAt', 'value', 'min', 'max', 'count'],
      366,
      [24],
    ]);
  });

  t.test('a year of approved measurements only, in pandas', { skip }, async (t) => {
    if (pandasMissing)
      return void t.fail('pandas is missing, and CI must run this test: .ci/run installs it');
    // The first half of 2024 approved but for one rejected day; the rest stays provisional.
    await setStatus(sql, tube!.id, 'approved', '2024-01-01T00:00:00Z', '2024-07-01T00:00:00Z');
    await setStatus(sql, tube!.id, 'rejected', '2024-03-10T00:00:00Z', '2024-03-11T00:00:00Z');
    const directory = t.testdir({ 'approved.py': recipe('approved.py') });
    const script = `
import json, runpy
frames = runpy.run_path("approved.py")
approved, daily = frames["approved"], frames["daily"]
by_day = approved.groupby(approved["observedAt"].dt.floor("D"))["value"]
print(json.dumps({
  "approved": [str(approved["observedAt"].dtype), list(approved.columns), len(approved), sorted(set(approved["status"]))],
  "daily": [list(daily.columns), len(daily), sorted(set(daily["count"]))],
  "days": str(daily["observedAt"].iloc[0]) + " " + str(daily["observedAt"].iloc[-1]),
  "rejectedDayLeftOut": "2024-03-10" not in set(daily["observedAt"].dt.strftime("%Y-%m-%d")),
  "minMaxOfTheApproved": list(by_day.min().values) == list(daily["min"]) and list(by_day.max().values) == list(daily["max"]),
}))`;
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], { cwd: directory, env });
    const days = 182 - 1;
    t.same(JSON.parse(stdout), {
      approved: [
        'datetime64[ns, UTC]',
        ['observedAt', 'value', 'status', 'unit', 'verticalDatum'],
        days * 24,
        ['approved'],
      ],
      daily: [['observedAt', 'value', 'min', 'max', 'count', 'unit', 'verticalDatum'], days, [24]],
      days: '2024-01-01 00:00:00+00:00 2024-06-30 00:00:00+00:00',
      rejectedDayLeftOut: true,
      minMaxOfTheApproved: true,
    });
  });
});

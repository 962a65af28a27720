/**
 * The dashboard recipe of docs/clients.md, run as it stands there against a real server with rows
 * imported by the real importer: one row per tube that has a measurement, in discovery's order, each
 * with its latest value, status and age, the tube without a day's news flagged stale.
 */
import { execFile, spawnSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import t from 'tap';
import { importMeasurements } from '../../../src/importers/measurements/measurements.js';
import { addKey, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { recipe } from '../../helpers/clientGuide.js';
import { PYTHON } from '../../helpers/latest.js';

const pandasMissing = spawnSync(PYTHON, ['-c', 'import pandas']).status !== 0;

t.test(
  'the dashboard recipe of latest',
  { skip: pandasMissing && !process.env.CI && 'no pandas' },
  async (t) => {
    const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
    const { sql } = api.db;
    const [fresh, old, silent] = await addWell(sql, 'W 2', [
      { number: '1' },
      { number: '2' },
      { number: '3' },
    ]);
    const [first] = await addWell(sql, 'W 10', [{ number: '1' }]);
    const { key } = await addKey(sql, { tubeIds: [fresh!.id, old!.id, silent!.id, first!.id] });
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const csv = [
      'tubeIdentifier,observedAt,value,status',
      `${fresh!.identifier},${weekAgo},1.5,approved`,
      `${fresh!.identifier},${hourAgo},-0.25,provisional`,
      `${old!.identifier},${weekAgo},2,approved`,
      `${first!.identifier},${hourAgo},12.3456789012345,rejected`,
    ].join('\n');
    await importMeasurements(sql, Readable.from([Buffer.from(`${csv}\n`)]), { name: 'levels.csv' });
    const directory = t.testdir({ 'dashboard.py': recipe('dashboard.py') });
    const script = `import runpy, json
latest = runpy.run_path("dashboard.py")["latest"]
print(json.dumps([[r.tubeIdentifier, r.observedAt.isoformat(), r.value, r.status, bool(r.stale)] for r in latest.itertuples()]))`;
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], {
      cwd: directory,
      env: { BASE: `${api.base}/v1`, KEY: key },
    });
    const printed = stdout.trim().split('\n');
    const rows = JSON.parse(printed.at(-1)!);
    // Python's isoformat writes microseconds: six digits.
    const at = (iso: string) => iso.replace('Z', '000+00:00');
    t.same(
      rows,
      [
        [fresh!.identifier, at(hourAgo), -0.25, 'provisional', false],
        [old!.identifier, at(weekAgo), 2, 'approved', true],
        [first!.identifier, at(hourAgo), 12.3456789012345, 'rejected', false],
      ],
      'a row per tube with a measurement, in discovery order; the silent tube left out',
    );
  },
);

/**
 * A fresh demo as a newcomer tries it: the banner's requests, pasted into a shell (GDAL's ogrinfo
 * too, where installed), each answer with data, and so does every endpoint and format beside them (series, network and latest in each format,
 * aggregation, statuses, a sync token and its delta). The demo's data must be kept by the import's own
 * paths for that: latest, the daily rollups and the change history.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { tableFromIPC } from 'apache-arrow';
import t from 'tap';
import { demoBanner } from '../../src/demo/banner.js';
import { createDemoKey, DEMO_PROVISIONAL_DAYS, seedDemo } from '../../src/demo/seed.js';
import { DEMO_TUBES, EXAMPLE_DEMO_TUBE, HIDDEN_DEMO_TUBE } from '../../src/demo/wells.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { startApi } from '../helpers/api.js';
import { get } from '../helpers/http.js';

const gdalMissing = spawnSync('ogrinfo', ['--version']).status !== 0;
const STEP_MS = 15 * 60_000;
const PER_DAY = 96;
const READABLE = DEMO_TUBES.filter((tube) => tube !== HIDDEN_DEMO_TUBE);
const iso = (time: number) => new Date(time).toISOString().replace('.000Z', 'Z');

t.test('every endpoint answers with data on a fresh demo', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const data = await seedDemo(sql);
  const { key, keyId } = await createDemoKey(sql);
  const banner = demoBanner({ address: api.base, database: 'a test database', data, key, keyId });
  const directory = t.testdir({});
  /** One of the banner's requests, found by what it asks for, run by sh as pasted. */
  const run = async (asks: RegExp, env: Record<string, string> = {}) => {
    const lines = banner.split('\n').filter((line) => line.startsWith('  ') && asks.test(line));
    if (lines.length !== 1) throw new Error(`${lines.length} lines of the banner ask for ${asks}`);
    const { stdout } = await promisify(execFile)('sh', ['-eu', '-c', lines[0]!], {
      cwd: directory,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    });
    return stdout;
  };
  const read = async (path: string, headers: Record<string, string> = {}) => {
    const response = await get(api.base, `/v1${path}`, { 'x-api-key': key, ...headers });
    t.equal(response.status, 200, path);
    return response;
  };
  const to = data.to.getTime();
  const last = iso(to - STEP_MS);
  const month = `from=${iso(to - 30 * 86_400_000)}&to=${iso(to)}`;

  t.test('the banner’s requests', async (t) => {
    const wells = JSON.parse(await run(/groundwater-monitoring-wells$/));
    t.same(
      wells.flatMap((well: { tubes: { identifier: string }[] }) => well.tubes.map((tube) => tube.identifier)),
      READABLE.map((tube) => tube.identifier),
      'discovery: every tube of the key',
    );
    const map = JSON.parse(await run(/format=geojson/));
    t.equal(map.type, 'FeatureCollection');
    t.equal(map.features.length, wells.length, 'GeoJSON: a feature per well');
    t.ok(
      map.features.every((feature: { geometry: unknown }) => feature.geometry !== null),
      'each on the map',
    );

    const series = JSON.parse(await run(new RegExp(`${EXAMPLE_DEMO_TUBE.identifier}/measurements`)));
    t.equal(series.measurements.length, 30 * PER_DAY, 'the last 30 days of the example tube');
    t.match(await run(new RegExp(HIDDEN_DEMO_TUBE.identifier)), /^HTTP\/1\.1 404 /, 'the hidden tube');

    const latest = JSON.parse(await run(/\/latest$/));
    t.same(
      latest.map((row: { tubeIdentifier: string; observedAt: string }) => [
        row.tubeIdentifier,
        row.observedAt,
      ]),
      READABLE.map((tube) => [tube.identifier, last]),
      'latest: the last measurement of each tube',
    );

    t.equal(await run(/format=arrow/), '', 'Arrow goes to a file');
    const [file] = await readdir(directory);
    t.match(file, /^groundwater-measurements_\d{8}T000000Z_\d{8}T000000Z\.arrows$/);
    const table = tableFromIPC(await readFile(join(directory, file!)));
    t.equal(table.numRows, READABLE.length * 30 * PER_DAY, 'Arrow: the last 30 days of every tube');

    t.equal(await run(/TOKEN=\$\(/), '', 'the token is kept in a variable, not printed');
    // The same line, printing what it kept; then a level written after it, by an import.
    const lines = banner.split('\n');
    const keep = lines.find((line) => line.includes('TOKEN=$('))!;
    const { stdout: kept } = await promisify(execFile)('sh', ['-eu', '-c', `${keep}; echo "$TOKEN"`], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const syncToken = kept.trim();
    t.match(syncToken, /^[\w-]{20,}$/, 'a sync token');
    const corrected = iso(to - 2 * STEP_MS);
    await importMeasurements(
      sql,
      Readable.from([`tubeIdentifier,observedAt,value\n${EXAMPLE_DEMO_TUBE.identifier},${corrected},-1.5\n`]),
      { name: 'a correction' },
    );
    const delta = JSON.parse(await run(/changedSince=/, { TOKEN: syncToken }));
    t.same(
      delta.series.flatMap((element: { tubeIdentifier: string; measurements: unknown[] }) =>
        element.measurements.map((measurement) => [element.tubeIdentifier, measurement]),
      ),
      [[EXAMPLE_DEMO_TUBE.identifier, { observedAt: corrected, value: -1.5 }]],
      'the delta: the correction only',
    );

    const contract = JSON.parse(await run(/\/openapi\.json$/));
    t.match(contract, { openapi: /^3\.1/ });
    t.match(banner, `  ogrinfo --config GDAL_HTTP_HEADERS 'X-API-Key: ${key}' OAPIF:${api.base}/v1/ogc\n`);
    if (gdalMissing) return t.comment('no ogrinfo here: the OGC API - Features line is not run');
    const layers = await run(/^ {2}ogrinfo /);
    t.same(
      [...layers.matchAll(/^\d+: (\w+)/gm)].map(([, name]) => name).sort(),
      ['latest', 'measurements', 'tubes'],
      'GDAL lists the collections',
    );
  });

  t.test('each endpoint in each format', async (t) => {
    const tube = `/groundwater-monitoring-tubes/${EXAMPLE_DEMO_TUBE.identifier}/measurements?${month}`;
    const csv = (await read(`${tube}&format=csv`)).body.trim().split('\n');
    t.equal(csv.length, 1 + 30 * PER_DAY, 'the series as CSV');
    const arrow = tableFromIPC((await read(`${tube}&format=arrow`)).bytes);
    t.equal(arrow.numRows, 30 * PER_DAY, 'the series as Arrow');
    const statuses = JSON.parse((await read(`${tube}&include=status`)).body).measurements;
    t.same(
      [statuses[0].status, statuses.at(-1).status],
      ['approved', 'provisional'],
      'approved, then provisional for the last days',
    );
    const days = JSON.parse((await read(`${tube}&aggregate=P1D`)).body).measurements;
    t.equal(days.length, 30, 'the series by day');
    t.equal(
      days.reduce((sum: number, day: { count: number }) => sum + day.count, 0),
      30 * PER_DAY,
      'the days count every measurement',
    );

    const network = JSON.parse((await read(`/groundwater-monitoring-measurements?${month}`)).body);
    t.same(
      network.series.map((element: { measurements: unknown[] }) => element.measurements.length),
      READABLE.map(() => 30 * PER_DAY),
      'the network as JSON',
    );
    const networkCsv = (await read(`/groundwater-monitoring-measurements?${month}&format=csv`)).body;
    t.equal(networkCsv.trim().split('\n').length, 1 + READABLE.length * 30 * PER_DAY, 'the network as CSV');
    const year = `from=${iso(data.from.getTime())}&to=${iso(to)}`;
    const daily = JSON.parse((await read(`/groundwater-monitoring-measurements?${year}&aggregate=P1D`)).body);
    t.same(
      daily.series.map((element: { measurements: { count: number }[] }) =>
        element.measurements.every((day) => day.count === PER_DAY) ? element.measurements.length : -1,
      ),
      READABLE.map(() => data.to.getTime() / 86_400_000 - data.from.getTime() / 86_400_000),
      'the network by day over the year, each day whole',
    );

    const approved = JSON.parse(
      (await read('/groundwater-monitoring-measurements/latest?status=approved&include=status')).body,
    );
    t.same(
      approved.map((row: { observedAt: string; status: string }) => [row.observedAt, row.status]),
      READABLE.map(() => [iso(to - DEMO_PROVISIONAL_DAYS * 86_400_000 - STEP_MS), 'approved']),
      'latest approved: before the provisional days',
    );
    const latestCsv = (await read('/groundwater-monitoring-measurements/latest?format=csv')).body;
    t.equal(latestCsv.trim().split('\n').length, 1 + READABLE.length, 'latest as CSV');
    const latestMap = JSON.parse(
      (await read('/groundwater-monitoring-measurements/latest', { accept: 'application/geo+json' })).body,
    );
    t.equal(latestMap.features.length, READABLE.length, 'latest as GeoJSON');
  });
});

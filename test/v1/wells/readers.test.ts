/**
 * Readers not written here open discovery's GeoJSON from a real server with the key header alone:
 * GDAL/OGR's ogrinfo (Debian's gdal-bin) as the client guide's wells.sh runs it and feature by feature,
 * and geopandas (Debian's python3-geopandas) through the guide's wells.py. What each reads is compared
 * value by value with the JSON of the same key: names, points (or none), and every tube with its unit,
 * datum and elevations.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { geopandas, ogrinfo, PYTHON } from '../../../testkit/prerequisites.js';
import { startApi } from '../../helpers/api.js';
import { recipe } from '../../helpers/clientGuide.js';
import { get } from '../../helpers/http.js';
import { unlessInstalled } from '../../helpers/installed.js';
import { BOX, seedLocatedWells } from '../../helpers/locatedWells.js';

const run = promisify(execFile);

interface Well {
  name: string;
  location?: { type: 'Point'; coordinates: [number, number] };
  tubes: Record<string, string | number>[];
}

/** ogrinfo's features (`-al` without `-so`): each one's name, point and tubes. */
function ogrFeatures(output: string) {
  return output
    .split(/^OGRFeature\(.*\):\d+$/m)
    .slice(1)
    .map((block) => {
      const name = /^ {2}name \(String\) = (.*)$/m.exec(block)?.[1];
      const tubes = /^ {2}tubes \(String\(JSON\)\) = (.*)$/m.exec(block)?.[1];
      const point = /^ {2}POINT \((\S+) (\S+)\)$/m.exec(block);
      return {
        name,
        coordinates: point ? [Number(point[1]), Number(point[2])] : null,
        tubes: tubes === undefined ? undefined : JSON.parse(tubes),
      };
    });
}

t.test('GIS readers of discovery GeoJSON', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { keys } = await seedLocatedWells(api.db.sql);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', BASE: `${api.base}/v1`, KEY: keys.reader.key };
  const json = async (query = ''): Promise<Well[]> =>
    JSON.parse(
      (await get(api.base, `/v1/groundwater-monitoring-wells${query}`, { 'x-api-key': env.KEY })).body,
    );

  t.test('GDAL/OGR: ogrinfo with only the key header', { skip: unlessInstalled(ogrinfo) }, async (t) => {
    const wells = await json();
    const located = wells.flatMap((well) => (well.location ? [well.location.coordinates] : []));
    const directory = t.testdir({ 'wells.sh': recipe('wells.sh') });
    const summary = (await run('sh', ['-eu', 'wells.sh'], { cwd: directory, env })).stdout;
    t.match(summary, /^Geometry: Point$/m);
    t.match(summary, new RegExp(`^Feature Count: ${wells.length}$`, 'm'));
    const extent = /^Extent: \((\S+), (\S+)\) - \((\S+), (\S+)\)$/m.exec(summary);
    t.same(
      extent?.slice(1).map(Number),
      [
        Math.min(...located.map(([x]) => x)),
        Math.min(...located.map(([, y]) => y)),
        Math.max(...located.map(([x]) => x)),
        Math.max(...located.map(([, y]) => y)),
      ],
      'the extent of the located wells',
    );
    t.match(summary, /ID\["EPSG",4326\]/, 'WGS 84');
    t.match(summary, /^name: String/m);
    t.match(summary, /^tubes: String\(JSON\)/m);

    for (const query of ['?format=geojson', `?format=geojson&bbox=${BOX}`]) {
      const expected = await json(query.replace('format=geojson', 'format=json'));
      const { stdout } = await run(
        'ogrinfo',
        [
          '-ro',
          '-al',
          '--config',
          'GDAL_HTTP_HEADERS',
          `X-API-Key: ${env.KEY}`,
          `${env.BASE}/groundwater-monitoring-wells${query}`,
        ],
        { env },
      );
      t.same(
        ogrFeatures(stdout),
        expected.map((well) => ({
          name: well.name,
          coordinates: well.location?.coordinates ?? null,
          tubes: well.tubes,
        })),
        `${query}: every feature as the JSON has it`,
      );
    }
  });

  t.test("geopandas: the guide's wells.py", { skip: unlessInstalled(geopandas) }, async (t) => {
    const wells = await json();
    const directory = t.testdir({ 'wells.py': recipe('wells.py') });
    const script = `
import json, math, runpy
frames = runpy.run_path("wells.py")
wells, tubes = frames["wells"], frames["tubes"]
point = lambda g: None if g is None else [g.x, g.y]
clean = lambda row: {k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))}
print(json.dumps({
    "crs": wells.crs.to_string(),
    "wells": [{"name": n, "point": point(g)} for n, g in zip(wells["name"], wells.geometry)],
    "tubes": [clean(r) | {"point": point(g)} for r, g in zip(tubes.drop(columns="geometry").to_dict("records"), tubes.geometry)],
}))`;
    const { stdout } = await run(PYTHON, ['-c', script], { cwd: directory, env });
    const read = JSON.parse(stdout);
    t.equal(read.crs, 'EPSG:4326');
    t.same(
      read.wells,
      wells.map((well) => ({ name: well.name, point: well.location?.coordinates ?? null })),
      'one row per well: its name and point',
    );
    t.same(
      read.tubes,
      wells.flatMap((well) =>
        well.tubes.map((tube) => ({ name: well.name, ...tube, point: well.location?.coordinates ?? null })),
      ),
      "one row per tube: its well's name and point, and every value the JSON has",
    );
  });
});

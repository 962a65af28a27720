/**
 * Latest over real HTTP on plain PostgreSQL: the latest measurement of each readable tube, in
 * discovery's order, as JSON, CSV, Arrow and GeoJSON, each read by real readers and compared with the
 * JSON, which is compared with the latest asked of the measurements themselves; with and without a
 * status filter and include=status; listed tubes; `bbox`; and nothing of a hidden tube, in a well that
 * mixes readable and hidden tubes too, nor of a hidden well inside a box.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import {
  expectedLatest,
  geopandasMissing,
  LATEST,
  type LatestRow,
  ogrMissing,
  PYTHON,
  provesLatestFormats,
  refreshLatest,
  withoutStatus,
} from '../../helpers/latest.js';
import { addOrderedNetwork, decoded } from '../../helpers/network.js';

const run = promisify(execFile);

t.test('latest in every format', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const { precise, empty, quoted, long, inOrder } = await addOrderedNetwork(sql);
  // A hidden tube in a readable well, with the well's latest measurement of all, and a hidden well.
  const [, hiddenBeside] = await addWell(sql, 'B 2 bis', [{ number: '1' }, { number: '2' }]);
  await sql`update tubes set well_id = (select well_id from tubes where id = ${long.id}), number = '3'
    where id = ${hiddenBeside!.id}`;
  await addMeasurements(sql, hiddenBeside!.id, [['2025-06-01T00:00:00Z', '9.75']]);
  const [hidden] = await addWell(sql, 'A hidden', [{ number: '1' }]);
  await addMeasurements(sql, hidden!.id, [['2025-06-01T00:00:00Z', '8.5']]);
  // Statuses: precise's last measurement rejected, its one before approved; long approved but its last
  // hour; quoted's provisional (the default).
  await sql`update measurements set status = 2 where tube_id = ${precise.id} and observed_at = '2024-02-01T00:00:00Z'`;
  await sql`update measurements set status = 0 where tube_id = ${precise.id} and observed_at = '2024-01-31T23:59:59.999999Z'`;
  await sql`update measurements set status = 0 where tube_id = ${long.id} and observed_at < '2024-01-12T23:00:00Z'`;
  await sql`update wells set longitude = 5.123456789, latitude = 52.000001 where name = 'B 10'`;
  await refreshLatest(sql);
  const readable = [precise, empty, quoted, long];
  const { key } = await addKey(sql, { tubeIds: readable.map((tube) => tube.id) });
  const withTubes = inOrder.filter((identifier) => identifier !== empty.identifier);

  t.test('every status: each tube with a measurement, in discovery order', async (t) => {
    const expected = await expectedLatest(sql, inOrder);
    t.same(
      expected.map((row) => row.tubeIdentifier),
      withTubes,
      'the tube without measurements is left out',
    );
    t.equal(expected[1]!.observedAt, '2024-02-01T00:00:00Z', "precise's latest is its rejected one");
    await provesLatestFormats(t, api.base, key, '', withoutStatus(expected));
    await provesLatestFormats(t, api.base, key, 'include=status', expected);
  });

  t.test('status filters: per tube the newest of the statuses that pass', async (t) => {
    for (const statuses of [['approved'], ['provisional'], ['rejected'], ['approved', 'rejected']]) {
      const expected = await expectedLatest(sql, inOrder, statuses);
      await provesLatestFormats(t, api.base, key, `status=${statuses.join(',')}&include=status`, expected);
    }
    const approved = await expectedLatest(sql, inOrder, ['approved']);
    t.same(
      approved.map((row) => [row.tubeIdentifier, row.observedAt]),
      [
        [long.identifier, '2024-01-12T22:59:00Z'],
        [precise.identifier, '2024-01-31T23:59:59.999999Z'],
      ],
      'approved: long before its last hour, precise before its rejected one; quoted has none',
    );
    const json = await get(api.base, `${LATEST}?status=rejected,provisional,approved`, { 'x-api-key': key });
    t.same(JSON.parse(json.body), withoutStatus(await expectedLatest(sql, inOrder)), 'every status listed');
  });

  t.test('listed tubes, in discovery order whatever the order given, case-insensitive', async (t) => {
    const listed = [quoted.identifier.toUpperCase(), empty.identifier, long.identifier];
    const expected = await expectedLatest(sql, [long.identifier, quoted.identifier]);
    await provesLatestFormats(t, api.base, key, `tubes=${listed.join(',')}`, withoutStatus(expected));
  });

  t.test('gzip and br', async (t) => {
    const expected = withoutStatus(await expectedLatest(sql, inOrder));
    for (const coding of ['gzip', 'br']) {
      const responses = await provesLatestFormats(t, api.base, key, '', expected, {
        'accept-encoding': coding,
      });
      for (const response of Object.values(responses)) t.equal(response.headers['content-encoding'], coding);
    }
  });

  t.test('nothing of a hidden tube: not its row, not its identifier, not its well beside', async (t) => {
    for (const format of ['json', 'csv', 'arrow', 'geojson']) {
      const response = await get(api.base, `${LATEST}?format=${format}`, { 'x-api-key': key });
      const body = response.bytes!.toString('latin1');
      for (const tube of [hidden!, hiddenBeside!]) {
        t.notOk(body.includes(tube.identifier), `${format}: not ${tube.number}'s identifier`);
      }
      t.notOk(body.includes('9.75') || body.includes('2025-06-01'), `${format}: not their values`);
      t.notOk(body.includes('A hidden'), `${format}: not the hidden well`);
    }
    const everything = await addKey(sql, { allTubes: true });
    const all = JSON.parse(
      (await get(api.base, LATEST, { 'x-api-key': everything.key })).body,
    ) as LatestRow[];
    t.same(
      all.map((row) => row.tubeIdentifier),
      [hidden!.identifier, long.identifier, hiddenBeside!.identifier, precise.identifier, quoted.identifier],
      'a key of every tube reads them, in discovery order',
    );
  });

  t.test('GeoJSON: the well location or null, wellName and tubeNumber', async (t) => {
    const response = await get(api.base, `${LATEST}?format=geojson`, { 'x-api-key': key });
    const collection = JSON.parse(response.body);
    t.same(
      collection.features.map((feature: { geometry: unknown; properties: Record<string, unknown> }) => [
        feature.geometry,
        feature.properties.wellName,
        feature.properties.tubeNumber,
      ]),
      [
        [null, 'B 2', '1'],
        [{ type: 'Point', coordinates: [5.123456789, 52.000001] }, 'B 10', '1'],
        [{ type: 'Point', coordinates: [5.123456789, 52.000001] }, 'B 10', '10'],
      ],
    );
    t.ok(response.body.startsWith('{"type":"FeatureCollection","features":[{"type":"Feature",'));
  });

  const expectedGeo = async () => withoutStatus(await expectedLatest(sql, inOrder));
  const url = `${api.base}${LATEST}?format=geojson&include=status`;

  t.test(
    'GDAL/OGR reads the GeoJSON with the key header alone',
    { skip: ogrMissing && !process.env.CI && 'no ogr2ogr (gdal-bin)' },
    async (t) => {
      const expected = await expectedLatest(sql, inOrder);
      // GDAL reads the URL itself; its CSV output (`-lco GEOMETRY=AS_XY`) shows what it read.
      const { stdout } = await run('ogr2ogr', [
        '--config',
        'GDAL_HTTP_HEADERS',
        `X-API-Key: ${key}`,
        '-f',
        'CSV',
        '/vsistdout/',
        url,
        '-lco',
        'GEOMETRY=AS_XY',
      ]);
      const [header, ...lines] = stdout.trim().split(/\r?\n/);
      t.equal(header, 'X,Y,tubeIdentifier,observedAt,value,status,unit,verticalDatum,wellName,tubeNumber');
      const rows = lines.map((line) => line.split(','));
      t.same(
        rows.map((row) => row[2]),
        expected.map((row) => row.tubeIdentifier),
        'every feature, in order',
      );
      t.same(
        rows.map((row) => Number(row[4])),
        expected.map((row) => row.value),
        'values as the JSON',
      );
      t.same(
        rows.map((row) => row[5]),
        expected.map((row) => row.status),
        'statuses as the JSON',
      );
      // OGR keeps a date-time to the millisecond.
      t.same(
        rows.map((row) =>
          Date.parse(`${row[3]!.replaceAll('/', '-').replace(' ', 'T').replace(/\+00$/, '')}Z`),
        ),
        expected.map((row) => Math.floor(Date.parse(row.observedAt))),
        'instants as the JSON, to the millisecond OGR keeps',
      );
      t.same(
        rows.map((row) => (row[0] === '' ? null : [Number(row[0]), Number(row[1])])),
        [null, [5.123456789, 52.000001], [5.123456789, 52.000001]],
        'locations',
      );
    },
  );

  t.test(
    'geopandas reads the GeoJSON',
    { skip: geopandasMissing && !process.env.CI && `${PYTHON} has no geopandas (python3-geopandas)` },
    async (t) => {
      const expected = await expectedLatest(sql, inOrder);
      const script = `
import io, json, os, urllib.request, geopandas
body = urllib.request.urlopen(urllib.request.Request(os.environ["URL"], headers={"X-API-Key": os.environ["KEY"]})).read()
frame = geopandas.read_file(io.BytesIO(body))
print(json.dumps({
  "rows": [[t, str(at), v, s] for t, at, v, s in zip(frame.tubeIdentifier, frame.observedAt, frame.value, frame.status)],
  "points": [None if g is None else [g.x, g.y] for g in frame.geometry],
}))
`;
      const { stdout } = await run(PYTHON, ['-c', script], { env: { URL: url, KEY: key } });
      const read = JSON.parse(stdout);
      t.same(
        read.rows.map((row: unknown[]) => [row[0], row[2], row[3]]),
        expected.map((row) => [row.tubeIdentifier, row.value, row.status]),
        'identifiers, values and statuses as the JSON',
      );
      t.same(read.points, [null, [5.123456789, 52.000001], [5.123456789, 52.000001]], 'locations');
      t.equal(read.rows.length, (await expectedGeo()).length);
    },
  );

  t.test('bbox: the tubes of the wells inside; nothing of a hidden tube or well inside it', async (t) => {
    // B 10 and the hidden well inside the box, B 2 (a readable and a hidden tube) outside it.
    await sql`update wells set longitude = 5.2, latitude = 52.1 where name = 'A hidden'`;
    await sql`update wells set longitude = 6, latitude = 53 where name = 'B 2'`;
    const box = 'bbox=5,52,5.5,52.5';
    const inBox = withoutStatus(await expectedLatest(sql, [precise.identifier, quoted.identifier]));
    t.same(
      inBox.map((row) => row.tubeIdentifier),
      [precise.identifier, quoted.identifier],
    );
    await provesLatestFormats(t, api.base, key, box, inBox);
    const mixed = await get(api.base, `${LATEST}?bbox=5.9,52.9,6.1,53.1&include=status`, {
      'x-api-key': key,
    });
    t.same(
      JSON.parse(mixed.body),
      await expectedLatest(sql, [long.identifier]),
      'B 2: its readable tube alone',
    );
    const listed = `tubes=${long.identifier},${quoted.identifier}&${box}`;
    const both = JSON.parse((await get(api.base, `${LATEST}?${listed}`, { 'x-api-key': key })).body);
    t.same(both, withoutStatus(await expectedLatest(sql, [quoted.identifier])), 'tubes and bbox: both apply');
    // A box around the hidden well alone answers as a box around nothing at all: the same bytes and tag.
    for (const format of ['json', 'csv', 'arrow', 'geojson']) {
      const around = (bbox: string) =>
        get(api.base, `${LATEST}?bbox=${bbox}&format=${format}`, { 'x-api-key': key });
      const hiddenOnly = await around('5.15,52.05,5.25,52.15');
      const empty = await around('0,0,1,1');
      t.equal(hiddenOnly.status, 200, `${format}: a 200`);
      t.same(hiddenOnly.bytes, empty.bytes, `${format}: the body of an empty box`);
      t.equal(hiddenOnly.headers.etag, empty.headers.etag, `${format}: its tag`);
    }
    const nothing = await addKey(sql);
    t.equal(
      (await get(api.base, `${LATEST}?${box}`, { 'x-api-key': nothing.key })).status,
      403,
      'a key of no tube: 403',
    );
    const refused = await get(api.base, `${LATEST}?bbox=5,52,4,53`, { 'x-api-key': key });
    t.equal(refused.status, 400);
    t.same(Object.keys(JSON.parse(refused.body).errors), ['bbox']);
  });

  t.test('an empty answer in every format', async (t) => {
    await provesLatestFormats(t, api.base, key, `tubes=${empty.identifier}`, []);
    const csv = await get(api.base, `${LATEST}?format=csv&tubes=${empty.identifier}`, { 'x-api-key': key });
    t.equal(decoded(csv), 'tubeIdentifier,observedAt,value,unit,verticalDatum\r\n');
    const geo = await get(api.base, `${LATEST}?format=geojson&tubes=${empty.identifier}`, {
      'x-api-key': key,
    });
    t.equal(geo.body, '{"type":"FeatureCollection","features":[]}');
    const json = await get(api.base, `${LATEST}?tubes=${empty.identifier}`, { 'x-api-key': key });
    t.equal(json.body, '[]');
  });
});

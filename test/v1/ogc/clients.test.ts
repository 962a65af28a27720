/**
 * The GIS clients that read any OGC API - Features server, reading /v1/ogc of a real `gwapi serve` with
 * a key limited to some tubes: GDAL/OGR (Debian's gdal-bin) lists the collections, with the key's feature
 * counts and extents, and copies each into a GeoPackage, page after page, with the key as a header file and
 * as `api_key` in the URL; OWSLib
 * (python3-owslib) lists the feature collections and reads items by `bbox` and `limit`; QGIS
 * (python3-qgis, headless) opens an OAPIF layer on each collection with the key as `api_key`. What each
 * reads is compared with what the rest of /v1 gives the same key: discovery, latest and the series. The
 * landing page's service-desc, which QGIS reads for page sizes, is valid OpenAPI 3.0 (the oas30 class).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Test } from 'tap';
import t from 'tap';
import { addMeasurements } from '../../../testkit/fixtures.js';
import type { LogLine } from '../../../testkit/gwapi.js';
import { ogrinfo, owslib, PYTHON, qgis } from '../../../testkit/prerequisites.js';
import { recipe } from '../../helpers/clientGuide.js';
import { freshDatabase } from '../../helpers/database.js';
import { get } from '../../helpers/http.js';
import { unlessInstalled } from '../../helpers/installed.js';
import { type LatestRow, refreshLatest } from '../../helpers/latest.js';
import { BOX, READABLE, seedLocatedWells, TUBES } from '../../helpers/locatedWells.js';
import { startReplica } from '../../helpers/serve.js';
import { until } from '../../helpers/until.js';

const run = promisify(execFile);
const COLLECTIONS = ['tubes', 'latest', 'measurements'] as const;
type CollectionId = (typeof COLLECTIONS)[number];
/** Small pages, so that every client follows several next links. */
const PAGE_SIZE = 2;
const DAY = { from: '2024-01-01T00:00:00Z', to: '2024-01-02T00:00:00Z' };

/** Hourly levels from midnight of DAY: how many each tube has (hidden tubes too). */
const MEASURED: [string, number][] = [
  [TUBES.amstel1a, 5],
  [TUBES.amstel10, 3],
  [TUBES.maas, 4],
  [TUBES.nowhere, 2],
  [TUBES.mixedReadable, 1],
  [TUBES.mixedHidden, 3],
  [TUBES.hidden, 2],
];
const HIDDEN: string[] = [TUBES.mixedHidden, TUBES.hidden];

/** A feature as every client is compared: its id, the properties that say whose it is, and its point. */
interface Read {
  id: string;
  tubeIdentifier: string;
  observedAt?: string;
  value?: number;
  point: [number, number] | null;
}

interface Well {
  name: string;
  location?: { coordinates: [number, number] };
  tubes: { identifier: string; number: string }[];
}

/** Instants as one string whatever the client made of them (GeoPackage keeps milliseconds). */
const instant = (text: string) => new Date(text).toISOString();
const byId = (a: Read, b: Read) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
/** The box of the features' points: minimum and maximum longitude and latitude. */
const extentOf = (features: Read[]) => {
  const points = features.flatMap((feature) => (feature.point ? [feature.point] : []));
  const longitudes = points.map(([longitude]) => longitude);
  const latitudes = points.map(([, latitude]) => latitude);
  return [Math.min(...longitudes), Math.min(...latitudes), Math.max(...longitudes), Math.max(...latitudes)];
};
/** BOX as numbers: minimum and maximum longitude and latitude. */
const [WEST, SOUTH, EAST, NORTH] = BOX.split(',').map(Number) as [number, number, number, number];
const inBox = (feature: Read) =>
  feature.point !== null &&
  feature.point[0] >= WEST &&
  feature.point[0] <= EAST &&
  feature.point[1] >= SOUTH &&
  feature.point[1] <= NORTH;

interface GeoJsonFeature {
  id?: string;
  properties: Record<string, unknown>;
  geometry: { coordinates: [number, number] } | null;
}

/** A feature as compared; `id` from the properties where a copy keeps it as a column. */
const readFeature = (feature: GeoJsonFeature): Read => {
  const { id, tubeIdentifier, observedAt, value } = feature.properties as {
    id?: string;
    tubeIdentifier: string;
    observedAt?: string;
    value?: number;
  };
  return {
    id: (feature.id ?? id)!,
    tubeIdentifier,
    ...(observedAt === undefined ? {} : { observedAt: instant(observedAt), value }),
    point: feature.geometry?.coordinates ?? null,
  };
};

t.test('GIS clients read /v1/ogc with a key limited to some tubes', async (t) => {
  const db = await freshDatabase(t);
  const { keys, tubeIds } = await seedLocatedWells(db.sql);
  for (const [identifier, count] of MEASURED) {
    await addMeasurements(
      db.sql,
      tubeIds.get(identifier)!,
      Array.from({ length: count }, (_, hour) => [
        `2024-01-01T${String(hour).padStart(2, '0')}:00:00Z`,
        (hour / 4 - 1.25).toFixed(3),
      ]),
    );
  }
  await refreshLatest(db.sql);
  const replica = await startReplica(t, { DATABASE_URL: db.url, LIMITS_ENABLED: 'false' });
  const KEY = keys.reader.key;
  const BASE = `${replica.base}/v1`;
  // A home of the test's own: QGIS keeps an HTTP cache there, which would answer a later run's requests.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.testdir({}), BASE, KEY };
  const json = async <T>(path: string): Promise<T> => {
    const response = await get(replica.base, `/v1${path}`, { 'x-api-key': KEY });
    t.equal(response.status, 200, path);
    return JSON.parse(response.body) as T;
  };

  // What the rest of /v1 gives the same key, as each collection's features.
  const wells = await json<Well[]>('/groundwater-monitoring-wells');
  const pointOf = new Map(
    wells.flatMap((well) =>
      well.tubes.map((tube) => [tube.identifier, well.location?.coordinates ?? null] as const),
    ),
  );
  const expected: Record<CollectionId, Read[]> = {
    tubes: wells.flatMap((well) =>
      well.tubes.map((tube) => ({
        id: tube.identifier,
        tubeIdentifier: tube.identifier,
        point: well.location?.coordinates ?? null,
      })),
    ),
    latest: (await json<LatestRow[]>('/groundwater-monitoring-measurements/latest')).map((row) => ({
      id: row.tubeIdentifier,
      tubeIdentifier: row.tubeIdentifier,
      observedAt: instant(row.observedAt),
      value: row.value,
      point: pointOf.get(row.tubeIdentifier) ?? null,
    })),
    measurements: [],
  };
  for (const tube of pointOf.keys()) {
    const series = await json<{ measurements: { observedAt: string; value: number }[] }>(
      `/groundwater-monitoring-tubes/${tube}/measurements?from=${DAY.from}&to=${DAY.to}`,
    );
    for (const { observedAt, value } of series.measurements) {
      expected.measurements.push({
        id: `${tube}:${observedAt}`,
        tubeIdentifier: tube,
        observedAt: instant(observedAt),
        value,
        point: pointOf.get(tube) ?? null,
      });
    }
  }
  t.same([...pointOf.keys()].sort(), [...READABLE].sort(), 'the key reads some tubes');
  t.equal(expected.latest.length, 5, 'five of them have measurements');
  t.equal(expected.measurements.length, 15);

  /** A request of the test's own, which the clients never send. */
  const SENTINEL = '/v1/ogc/conformance?f=json';
  const requestsIn = (from: number) =>
    replica.logs.slice(from).flatMap((line) => {
      const { url, status } = line as LogLine & { url?: string; status?: number };
      return url === undefined ? [] : [{ url, status }];
    });
  /**
   * Where the server's log stands once every request answered so far is in it: a line is written after
   * its response, so the test's own request is sent and its line awaited.
   */
  const logSettled = async () => {
    const from = replica.logs.length;
    t.equal((await get(replica.base, SENTINEL)).status, 200);
    await until(
      'the test’s request is logged',
      async () => requestsIn(from),
      (lines) => lines.some(({ url }) => url === SENTINEL),
    );
    return replica.logs.length;
  };
  /** The requests the server answered since the log stood at `from`, the test's own left out. */
  const requestsSince = async (from: number) => {
    await logSettled();
    return requestsIn(from).filter(({ url }) => url !== SENTINEL);
  };
  /** How many next links a client followed on `id`'s items. */
  const nextLinksFollowed = (requests: { url: string }[], id: CollectionId) =>
    requests.filter(
      ({ url }) => url.startsWith(`/v1/ogc/collections/${id}/items?`) && url.includes('cursor='),
    ).length;
  /** The start of a request for a page of `limit` features of `id`. */
  const pageOf = (id: CollectionId, limit: number) => `/v1/ogc/collections/${id}/items?limit=${limit}`;
  const pagesAfterTheFirst = (id: CollectionId) => Math.ceil(expected[id].length / PAGE_SIZE) - 1;
  /** No feature of a tube the key may not read. */
  const noHiddenTube = (t: Test, features: Read[], what: string) =>
    t.same(
      features.filter((feature) => HIDDEN.includes(feature.tubeIdentifier)),
      [],
      `${what}: nothing of a tube the key may not read`,
    );

  t.test('GDAL/OGR: ogrinfo and ogr2ogr', { skip: unlessInstalled(ogrinfo) }, async (t) => {
    const directory = t.testdir({ 'ogc.sh': recipe('ogc.sh') });
    /** A GeoPackage's layer, read back through GDAL as GeoJSON. */
    const copied = async (file: string, layer: string) =>
      (
        JSON.parse((await run('ogr2ogr', ['-f', 'GeoJSON', '/vsistdout/', file, layer], { env })).stdout) as {
          features: GeoJsonFeature[];
        }
      ).features.map(readFeature);

    t.test("the guide's ogc.sh: the key in a header file", async (t) => {
      const from = await logSettled();
      const { stdout } = await run('sh', ['-eu', 'ogc.sh'], { cwd: directory, env });
      t.same(
        [...stdout.matchAll(/^\d+: (\w+) .*\(Point\)$/gm)].map(([, name]) => name),
        [...COLLECTIONS],
        'ogrinfo lists the three collections, as points',
      );
      t.same(await copied(join(directory, 'network.gpkg'), 'tubes'), expected.tubes, 'tubes');
      t.same(await copied(join(directory, 'network.gpkg'), 'latest'), expected.latest, 'latest');
      const region = await copied(join(directory, 'region.gpkg'), 'measurements');
      t.same(region, expected.measurements.filter(inBox), 'the measurements of the wells in the box');
      noHiddenTube(t, region, 'region.gpkg');
      const requests = await requestsSince(from);
      t.same(
        requests.filter(({ status, url }) => status !== 200 || url.includes('api_key')),
        [],
        'every request answered, none with the key in its URL',
      );
      t.ok(
        requests.some(({ url }) => url.startsWith(pageOf('measurements', 10_000)) && url.includes('&bbox=')),
        'the box sent as bbox, 10,000 features a request',
      );
      t.ok(
        requests.some(({ url }) => url.startsWith(pageOf('tubes', 10_000))),
        'the network copied 10,000 features a request',
      );
    });

    const header = join(directory, 'key-header.txt');
    const ways = [
      { way: 'GDAL_HTTP_HEADER_FILE', source: `OAPIF:${BASE}/ogc`, env: { GDAL_HTTP_HEADER_FILE: header } },
      { way: 'api_key in the URL', source: `OAPIF:${BASE}/ogc?api_key=${KEY}`, env: {} },
    ];
    for (const [index, { way, source, env: keyEnv }] of ways.entries()) {
      t.test(`every collection, ${PAGE_SIZE} features a page, with ${way}`, async (t) => {
        const from = await logSettled();
        const listed = await run('ogrinfo', ['-ro', '-al', '-so', source], { env: { ...env, ...keyEnv } });
        t.same(
          listed.stdout
            .split(/^Layer name: /m)
            .slice(1)
            .map((layer) => ({
              name: layer.split('\n')[0],
              count: Number(/^Feature Count: (\d+)$/m.exec(layer)?.[1]),
              extent: /^Extent: \((\S+), (\S+)\) - \((\S+), (\S+)\)$/m.exec(layer)?.slice(1).map(Number),
            })),
          COLLECTIONS.map((id) => ({ name: id, count: expected[id].length, extent: extentOf(expected[id]) })),
          "ogrinfo: the three collections, each with the key's feature count and extent",
        );
        const copy = join(directory, `copy-${index}.gpkg`);
        await run('ogr2ogr', ['-f', 'GPKG', '-oo', `PAGE_SIZE=${PAGE_SIZE}`, copy, source], {
          env: { ...env, ...keyEnv },
        });
        const requests = await requestsSince(from);
        for (const id of COLLECTIONS) {
          const features = await copied(copy, id);
          t.same(features, expected[id], `${id}: every feature the key may read, once, in order`);
          noHiddenTube(t, features, id);
          t.equal(nextLinksFollowed(requests, id), pagesAfterTheFirst(id), `${id}: every next link followed`);
        }
        t.same(
          requests.filter(({ status }) => status !== 200),
          [],
          'every request answered',
        );
        if (way === 'api_key in the URL') {
          t.same(
            requests.filter(({ url }) => !url.includes('api_key=')),
            [],
            'GDAL sends the URL’s api_key with every request, next links included',
          );
        }
      });
    }
  });

  t.test('the service-desc the clients are pointed to is valid OpenAPI 3.0', async (t) => {
    const landing = JSON.parse((await get(replica.base, '/v1/ogc')).body) as {
      links: { rel: string; type: string; href: string }[];
    };
    const link = landing.links.find(({ rel }) => rel === 'service-desc')!;
    t.equal(link.type, 'application/vnd.oai.openapi+json;version=3.0', 'the type OWSLib compares');
    const served = await get(replica.base, new URL(link.href).pathname);
    t.equal(served.status, 200);
    t.equal(served.headers['content-type'], link.type, 'served as the link says');
    const document = JSON.parse(served.body);
    t.match(document.openapi, /^3\.0\.\d+$/);
    const validator = new Validator();
    const result = await validator.validate(document);
    t.same(result.errors ?? [], [], 'valid as OpenAPI 3.0');
    t.equal(validator.version, '3.0');
  });

  t.test(
    'OWSLib: feature_collections() and collection_items()',
    { skip: unlessInstalled(owslib) },
    async (t) => {
      const directory = t.testdir({ 'features.py': recipe('features.py') });
      const script = `
import json, runpy
names = runpy.run_path("features.py")
service = names["service"]
small = {id: service.collection_items(id, bbox=[${BOX}], limit=${PAGE_SIZE}) for id in names["collections"]}
# The service-desc, found by the link type OWSLib compares.
api = service.api()
print(json.dumps({"collections": names["collections"], "page": names["page"], "small": small, "api": api}))`;
      const from = await logSettled();
      const { stdout } = await run(PYTHON, ['-c', script], { cwd: directory, env });
      const read = JSON.parse(stdout) as {
        api: { openapi: string };
        collections: string[];
        page: { features: GeoJsonFeature[]; numberMatched: number; links: { rel: string }[] };
        small: Record<
          CollectionId,
          {
            features: GeoJsonFeature[];
            numberMatched: number;
            numberReturned: number;
            links: { rel: string; href: string }[];
          }
        >;
      };
      t.same(read.collections, [...COLLECTIONS], 'the three feature collections');
      t.match(read.api.openapi, /^3\.0\.\d+$/, 'api(): the service-desc is OpenAPI 3.0');
      const validator = new Validator();
      const valid = await validator.validate(read.api);
      t.same(valid.errors ?? [], [], 'and valid as such');
      t.equal(validator.version, '3.0');
      const latestInBox = expected.latest.filter(inBox);
      t.same(
        read.page.features.map(readFeature),
        latestInBox,
        "the guide's page: the latest levels in the box",
      );
      t.equal(read.page.numberMatched, latestInBox.length);
      t.notOk(
        read.page.links.some(({ rel }) => rel === 'next'),
        'all of them on one page',
      );
      for (const id of COLLECTIONS) {
        const page = read.small[id];
        const matching = expected[id].filter(inBox);
        t.same(
          page.features.map(readFeature),
          matching.slice(0, PAGE_SIZE),
          `${id}: the first ${PAGE_SIZE} in the box`,
        );
        noHiddenTube(t, page.features.map(readFeature), id);
        t.equal(page.numberMatched, matching.length, `${id}: numberMatched counts those in the box`);
        t.equal(page.numberReturned, Math.min(PAGE_SIZE, matching.length));
        const next = page.links.find(({ rel }) => rel === 'next');
        t.equal(next !== undefined, matching.length > PAGE_SIZE, `${id}: a next link while more follow`);
        if (next) t.match(next.href, /[?&]bbox=4(%2C|,)52(%2C|,)5(%2C|,)52\.5(&|$)/, 'which keeps the box');
      }
      const requests = await requestsSince(from);
      t.same(
        requests.filter(({ status, url }) => status !== 200 || url.includes('api_key')),
        [],
        'every request answered, the key in the header only',
      );
    },
  );

  t.test('QGIS: an OAPIF layer on each collection', { skip: unlessInstalled(qgis) }, async (t) => {
    const directory = t.testdir({ 'layers.py': recipe('layers.py') });
    const script = `
import json, os, runpy
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from qgis.core import QgsApplication, QgsProject, QgsVectorLayer
app = QgsApplication([], False)
app.initQgis()
runpy.run_path("layers.py")
recipe = {layer.name(): {"valid": layer.isValid(), "count": layer.featureCount(), "read": len(list(layer.getFeatures()))}
          for layer in QgsProject.instance().mapLayers().values()}
def feature(f):
    names = f.fields().names()
    read = {"properties": {name: f[name] for name in ("id", "tubeIdentifier", "value") if name in names},
            "geometry": None if f.geometry().isNull() else {"coordinates": [f.geometry().asPoint().x(), f.geometry().asPoint().y()]}}
    if "observedAt" in names:
        read["properties"]["observedAt"] = f["observedAt"].toMSecsSinceEpoch()
    return read
paged = {}
for name in ${JSON.stringify(COLLECTIONS)}:
    uri = f"url='{os.environ['BASE']}/ogc?api_key={os.environ['KEY']}' typename='{name}' pageSize='${PAGE_SIZE}'"
    layer = QgsVectorLayer(uri, name, "OAPIF")
    paged[name] = {"valid": layer.isValid(), "count": layer.featureCount(),
                   "features": [feature(f) for f in layer.getFeatures()]}
    del layer
# Without pageSize, QGIS pages by what the OpenAPI document's shared limit parameter allows.
unsized = QgsVectorLayer(f"url='{os.environ['BASE']}/ogc?api_key={os.environ['KEY']}' typename='tubes'", "unsized", "OAPIF")
unsized_read = len(list(unsized.getFeatures()))
del unsized
print(json.dumps({"recipe": recipe, "paged": paged, "unsized": unsized_read}))
QgsProject.instance().removeAllMapLayers()
app.exitQgis()`;
    const from = await logSettled();
    // QGIS gives a date-time in the process's zone: UTC, so that its milliseconds are UTC's.
    const { stdout } = await run(PYTHON, ['-c', script], { cwd: directory, env: { ...env, TZ: 'UTC' } });
    const read = JSON.parse(stdout) as {
      recipe: Record<string, { valid: boolean; count: number; read: number }>;
      paged: Record<CollectionId, { valid: boolean; count: number; features: GeoJsonFeature[] }>;
      unsized: number;
    };
    t.equal(read.unsized, expected.tubes.length, 'a layer without a page size reads every tube');
    t.same(
      read.recipe,
      Object.fromEntries(
        COLLECTIONS.map((id) => [id, { valid: true, count: expected[id].length, read: expected[id].length }]),
      ),
      "the guide's layers.py: each layer valid, with the key's feature count, and read whole",
    );
    for (const id of COLLECTIONS) {
      const layer = read.paged[id];
      t.ok(layer.valid, `${id}: valid`);
      t.equal(layer.count, expected[id].length, `${id}: the feature count`);
      const features = layer.features.map((feature) =>
        readFeature({
          ...feature,
          properties: {
            ...feature.properties,
            ...(typeof feature.properties.observedAt === 'number'
              ? { observedAt: new Date(feature.properties.observedAt).toISOString() }
              : {}),
          },
        }),
      );
      t.same(
        features.sort(byId),
        [...expected[id]].sort(byId),
        `${id}: every feature the key may read, once`,
      );
      noHiddenTube(t, features, id);
    }
    const requests = await requestsSince(from);
    // QGIS keeps pages in its HTTP cache and asks again with their validators: a 304 answers that.
    t.same(
      requests.filter(({ status }) => status !== 200 && status !== 304),
      [],
      'every request answered (200, or 304 to a page QGIS holds)',
    );
    t.same(
      requests.filter(({ url }) => !url.includes('api_key=')),
      [],
      'QGIS sends the URL’s api_key with every request',
    );
    t.ok(
      requests.some(({ url }) => url.startsWith('/v1/ogc/api?')),
      'the OpenAPI document included: the service-desc, in 3.0',
    );
    t.same(
      COLLECTIONS.filter((id) => !requests.some(({ url }) => url.startsWith(pageOf(id, 10_000)))),
      [],
      "the guide's layers read 10,000 features a request",
    );
    t.ok(
      requests.some(({ url }) => new URL(url, replica.base).searchParams.get('limit') === '1000'),
      'without a page size, QGIS asks for the default page the document gives (1,000)',
    );
    for (const id of COLLECTIONS) {
      t.equal(nextLinksFollowed(requests, id) >= pagesAfterTheFirst(id), true, `${id}: next links followed`);
    }
  });
});

/**
 * Isolation between clients: generated registries (wells, tubes, measurements) and 20 keys with random
 * grants, over real sockets. A key must learn nothing about a tube it was not granted:
 *
 * - discovery lists exactly its tubes, and wells with at least one of them, as JSON and GeoJSON, whole
 *   and within a box (bbox); nothing else is in the bytes;
 * - a hidden tube answers byte for byte what an unknown tube answers (status, headers, body; after the
 *   identifier itself and the per-request X-Request-Id and Date are blanked), for GET and HEAD, with and
 *   without content coding, and with bad parameters too (400 comes before access);
 * - non-interference: after other wells, tubes, measurements and keys are added (hidden tubes even in
 *   wells the key sees), every answer the key gets is byte-identical to before.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { naturalCompare } from '../../src/domain/naturalOrder.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { createKey } from '../../src/keys/store.js';
import { containsLocation } from '../../src/v1/bbox.js';
import { rememberKey } from '../../testkit/outputCapture.js';
import { startApi } from '../helpers/api.js';
import { exchange, type RawResponse } from '../helpers/rawHttp.js';

const KEYS = 20;
const WELLS = '/v1/groundwater-monitoring-wells';
const INTERVAL = '?from=2024-01-01T00:00:00Z&to=2024-02-01T00:00:00Z';
const BAD_INTERVAL = '?from=2024-01-01T00:00:00Z&to=2023-01-01T00:00:00Z';
const series = (identifier: string, query = INTERVAL) =>
  `/v1/groundwater-monitoring-tubes/${identifier}/measurements${query}`;

interface TubeSpec {
  identifier: string;
  number: string;
  groundLevel: number | undefined;
  /** Days of January 2024 with a measurement. */
  days: number[];
}

interface WellSpec {
  name: string;
  location: { longitude: number; latitude: number } | undefined;
  tubes: TubeSpec[];
}

/** The box of the bbox probes: about half the locations generated lie inside it, some on its edges. */
const BOX = { minLongitude: -1, minLatitude: -1, maxLongitude: 1.5, maxLatitude: 1.5 };
const BBOX = '-1,-1,1.5,1.5';
/** Coordinates on a coarse grid, so that edges are hit. */
const coordinateArb = fc.integer({ min: -30, max: 30 }).map((tenths) => tenths / 10);

interface KeySpec {
  allTubes: boolean;
  /** One flag per tube of the registry, in order: granted or not. */
  picks: boolean[];
}

/** Identifiers come from randomUUID (fast-check's uuid() repeats itself); the rest is generated. */
const withIdentifier = (tube: Omit<TubeSpec, 'identifier'>): TubeSpec => ({
  ...tube,
  identifier: randomUUID(),
});

const tubeArb = fc.record({
  number: fc.stringMatching(/^(?:[0-9]{1,3}[a-c]?|[A-D])$/),
  groundLevel: fc.option(coordinateArb, { nil: undefined }),
  days: fc.uniqueArray(fc.integer({ min: 1, max: 31 }), { maxLength: 4 }),
});

const wellsArb = (minLength: number, maxLength: number) =>
  fc
    .uniqueArray(
      fc.record({
        name: fc.stringMatching(/^[A-Z][a-z]{1,6}(?: [0-9]{1,3})?$/),
        location: fc.option(fc.record({ longitude: coordinateArb, latitude: coordinateArb }), {
          nil: undefined,
        }),
        tubes: fc.uniqueArray(tubeArb, { selector: (tube) => tube.number, minLength: 1, maxLength: 5 }),
      }),
      { selector: (well) => well.name, minLength, maxLength },
    )
    .map((wells): WellSpec[] => wells.map((well) => ({ ...well, tubes: well.tubes.map(withIdentifier) })));

const keyArb = fc.record({
  allTubes: fc.oneof(
    { weight: 1, arbitrary: fc.constant(true) },
    { weight: 12, arbitrary: fc.constant(false) },
  ),
  // Sparse, half, dense or no grants at all.
  picks: fc.constantFrom(0, 0.2, 0.5, 0.9).chain((density) =>
    fc.array(
      fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x < density),
      { minLength: 40, maxLength: 40 },
    ),
  ),
});

const worldArb = fc.record({
  wells: wellsArb(3, 7),
  keys: fc.array(keyArb, { minLength: KEYS, maxLength: KEYS }),
  /** Added later: wells of new names, and tubes added to the existing wells. */
  laterWells: wellsArb(1, 3),
  laterTubes: fc.uniqueArray(tubeArb.map(withIdentifier), {
    selector: (tube) => tube.number,
    minLength: 1,
    maxLength: 4,
  }),
});

async function storeWells(sql: Sql, wells: WellSpec[]): Promise<void> {
  await upsertRegistry(
    sql,
    wells.map((well) => ({
      name: well.name,
      ...(well.location ? { location: well.location } : {}),
      tubes: well.tubes.map(({ identifier, number, groundLevel }) => ({
        identifier,
        number,
        ...(groundLevel === undefined ? {} : { groundLevel }),
      })),
    })),
  );
  for (const tube of wells.flatMap((well) => well.tubes)) {
    await sql`
      insert into measurements (tube_id, observed_at, value)
      select t.id, ('2024-01-01T12:00:00Z'::timestamptz + (d - 1) * interval '1 day'), d / 10.0
      from tubes t, unnest(${tube.days}::int[]) d
      where t.identifier = ${tube.identifier}`;
  }
}

function request(port: number, method: string, path: string, key: string, extra = ''): Promise<RawResponse> {
  const text = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n${extra}Connection: close\r\n\r\n`;
  return exchange(port, text, { head: method === 'HEAD', timeoutMs: 15_000 });
}

/**
 * Everything a client receives, as one text: status, header fields in order, body as sent. Only what
 * must differ between two requests is blanked: the request id, the date, and the identifier asked for.
 */
function view(response: RawResponse, identifier?: string): string {
  const head = response.head
    .split('\r\n')
    .filter((line) => !/^(x-request-id|date):/i.test(line))
    .join('\r\n');
  const text = `${response.status} ${response.reason}\r\n${head}\r\n\r\n${response.wireBody.toString('latin1')}`;
  return identifier === undefined ? text : text.split(identifier).join('{tube}');
}

interface Probe {
  variant: string;
  method: string;
  path: string;
  /** The tube asked for, as stored. */
  tube?: string;
  /** The tube as written in the path. */
  identifier?: string;
  extra?: string;
}

/** The requests whose answers make up a key's view of the service. */
function probes(granted: string[], hidden: string[], unknown: string[]) {
  const tubeProbes = (tube: string): Probe[] => [
    { variant: 'GET', method: 'GET', path: series(tube), tube, identifier: tube },
    { variant: 'HEAD', method: 'HEAD', path: series(tube), tube, identifier: tube },
    {
      variant: 'GET gzip, br',
      method: 'GET',
      path: series(tube),
      tube,
      identifier: tube,
      extra: 'Accept-Encoding: gzip, br\r\n',
    },
    {
      variant: 'GET in upper case',
      method: 'GET',
      path: series(tube.toUpperCase()),
      tube,
      identifier: tube.toUpperCase(),
    },
    {
      variant: 'GET to before from',
      method: 'GET',
      path: series(tube, BAD_INTERVAL),
      tube,
      identifier: tube,
    },
  ];
  return [
    { variant: 'discovery', method: 'GET', path: WELLS },
    { variant: 'discovery HEAD', method: 'HEAD', path: WELLS },
    { variant: 'discovery GeoJSON', method: 'GET', path: `${WELLS}?format=geojson` },
    { variant: 'discovery bbox', method: 'GET', path: `${WELLS}?bbox=${BBOX}` },
    {
      variant: 'discovery bbox GeoJSON',
      method: 'GET',
      path: `${WELLS}?bbox=${BBOX}`,
      extra: 'Accept: application/geo+json\r\n',
    },
    ...[...granted, ...hidden, ...unknown].flatMap(tubeProbes),
  ];
}

t.test('no key learns anything of a tube it was not granted', async (t) => {
  let worlds = 0;
  await fc.assert(
    fc.asyncProperty(worldArb, async (world) => {
      const api = await startApi(t, { env: { LIMITS_ENABLED: 'false', KEY_CACHE_SECONDS: '0' } });
      const { sql } = api.db;
      await storeWells(sql, world.wells);
      const tubes = world.wells.flatMap((well) => well.tubes.map((tube) => ({ ...tube, well: well.name })));
      const keys = await Promise.all(
        world.keys.map(async (spec: KeySpec, i) => {
          const grantedTubes = spec.allTubes
            ? tubes
            : tubes.filter((_, n) => spec.picks[n % spec.picks.length]);
          const created = await createKey(sql, {
            name: `client ${i}`,
            tubeIdentifiers: spec.allTubes ? [] : grantedTubes.map((tube) => tube.identifier),
            allTubes: spec.allTubes,
          });
          rememberKey(created.key);
          return { ...created, allTubes: spec.allTubes, granted: grantedTubes };
        }),
      );
      const unknown = [randomUUID(), randomUUID()];

      const observe = async (key: (typeof keys)[number]) => {
        const granted = key.granted.map((tube) => tube.identifier);
        const hidden = tubes
          .filter((tube) => !granted.includes(tube.identifier))
          .map((tube) => tube.identifier);
        const answers = [];
        for (const probe of probes(granted, hidden, unknown)) {
          const response = await request(api.port, probe.method, probe.path, key.key, probe.extra);
          answers.push({ probe, response, view: view(response, probe.identifier) });
        }
        return { key, granted, hidden, answers };
      };

      const before = await Promise.all(keys.map(observe));
      for (const { key, granted, answers } of before) {
        const label = `${key.keyId} (${granted.length} of ${tubes.length} tubes)`;
        const answer = (variant: string, tube?: string) =>
          answers.find((a) => a.probe.variant === variant && a.probe.tube === tube)!.response;

        // A hidden tube and an unknown tube are indistinguishable, in every probe.
        const views = new Map<string, Set<string>>();
        for (const { probe, view: text } of answers) {
          if (probe.tube === undefined || granted.includes(probe.tube)) continue;
          views.set(probe.variant, (views.get(probe.variant) ?? new Set()).add(text));
        }
        for (const [variant, texts] of views) {
          t.equal(texts.size, 1, `${label}: ${variant}: hidden and unknown tubes answer the same bytes`);
        }
        t.equal(answer('GET to before from', unknown[0]).status, 400, `${label}: parameters before access`);

        if (granted.length === 0) {
          // A key that reads nothing: 403 on both endpoints, whatever the tube.
          t.equal(answer('discovery').status, 403, `${label}: discovery 403`);
          t.equal(answer('GET', unknown[0]).status, 403, `${label}: measurements 403`);
          continue;
        }
        t.equal(answer('GET', unknown[0]).status, 404, `${label}: an unknown tube is 404`);

        // Discovery: exactly the granted tubes, grouped by well, in natural order, and nothing else.
        const expected = [...new Set(key.granted.map((tube) => tube.well))]
          .sort(naturalCompare)
          .map((name) => {
            const location = world.wells.find((well) => well.name === name)!.location;
            return {
              name,
              tubes: key.granted
                .filter((tube) => tube.well === name)
                .map(({ identifier, number, groundLevel }) => ({
                  identifier,
                  number,
                  unit: 'm',
                  verticalDatum: 'NAP',
                  ...(groundLevel === undefined ? {} : { groundLevel }),
                }))
                .sort((a, b) => naturalCompare(a.number, b.number)),
              ...(location
                ? { location: { type: 'Point', coordinates: [location.longitude, location.latitude] } }
                : {}),
            };
          });
        const body = answer('discovery').body.toString();
        t.same(JSON.parse(body), expected, `${label}: discovery lists exactly the granted tubes`);
        const inBox = expected.filter(
          ({ location }) =>
            location && containsLocation(BOX, location.coordinates[0]!, location.coordinates[1]!),
        );
        t.same(
          JSON.parse(answer('discovery bbox').body.toString()),
          inBox,
          `${label}: bbox, the wells inside`,
        );
        const features = (wells: typeof expected) => ({
          type: 'FeatureCollection',
          features: wells.map(({ name, tubes, location }) => ({
            type: 'Feature',
            geometry: location ?? null,
            properties: { name, tubes },
          })),
        });
        t.same(
          JSON.parse(answer('discovery GeoJSON').body.toString()),
          features(expected),
          `${label}: GeoJSON`,
        );
        t.same(
          JSON.parse(answer('discovery bbox GeoJSON').body.toString()),
          features(inBox),
          `${label}: bbox GeoJSON`,
        );
        const bodies = answers
          .filter(({ probe }) => probe.variant.startsWith('discovery'))
          .map(({ response }) => response.body.toString())
          .join('\n');
        const leaked = [
          ...tubes.filter((tube) => !granted.includes(tube.identifier) && bodies.includes(tube.identifier)),
          ...world.wells
            .filter((well) => !key.granted.some((tube) => tube.well === well.name))
            .filter((well) => bodies.includes(`"name":${JSON.stringify(well.name)}`)),
        ];
        t.same(leaked, [], `${label}: no hidden identifier or well name in the discovery bytes`);

        // Granted tubes: the series of exactly that tube.
        for (const tube of key.granted) {
          const got = JSON.parse(answer('GET', tube.identifier).body.toString());
          t.equal(
            got.measurements.length,
            tube.days.length,
            `${label}: ${tube.number} of ${tube.well}: its own rows`,
          );
        }
      }

      // Non-interference: more wells, tubes (some in wells the keys see), measurements and keys.
      const later = [
        ...world.laterWells.filter((well) => !world.wells.some((old) => old.name === well.name)),
        {
          // Stated whole, as an operator would: the same location as before.
          name: world.wells[0]!.name,
          location: world.wells[0]!.location,
          tubes: world.laterTubes.filter(
            (tube) => !world.wells[0]!.tubes.some((old) => old.number === tube.number),
          ),
        },
      ].filter((well) => well.tubes.length > 0);
      await storeWells(sql, later);
      const laterIdentifiers = later.flatMap((well) => well.tubes.map((tube) => tube.identifier));
      for (let i = 0; i < 3; i++) {
        await createKey(sql, {
          name: `later ${i}`,
          tubeIdentifiers: laterIdentifiers.slice(i),
          allTubes: false,
        });
      }
      // What the earlier keys saw must not change, except for keys that read every tube.
      const unaffected = keys.filter((key) => !key.allTubes);
      const after = await Promise.all(unaffected.map(observe));
      for (const [i, { key, answers }] of after.entries()) {
        const previous = before.find((b) => b.key.keyId === key.keyId)!.answers;
        const changed = answers.filter((a, n) => a.view !== previous[n]!.view);
        t.same(
          changed.map((a) => `${a.probe.method} ${a.probe.path}`),
          [],
          `${key.keyId}: the same bytes after tubes it may not see were added (${i})`,
        );
      }
      worlds++;
    }),
    { numRuns: 3, endOnFailure: true },
  );
  t.equal(worlds, 3, 'three generated worlds');
});

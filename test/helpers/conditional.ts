/**
 * Conditional requests (docs/clients.md) against a running API, the same on every storage path: validators on
 * 200, 304 by If-None-Match and If-Modified-Since, what changes them and what does not, and a 304 of a
 * series that reads no measurement. The caller says how rows are imported on its database.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import {
  type RegistryLocation,
  type RegistryWell,
  upsertRegistry,
} from '../../src/importers/registry/registry.js';
import { createKey, grantKey } from '../../src/keys/store.js';
import { VERSION_FRESH_MS } from '../../src/v1/wells/discoveryCache.js';
import { rememberKey } from '../../testkit/outputCapture.js';
import type { TestApi } from './api.js';
import { get, type HttpResponse, send } from './http.js';
import { OTHER, TUBE } from './importFixtures.js';

export type ImportRows = (rows: [tube: string, observedAt: string, value: string][]) => Promise<unknown>;

export const WELLS = '/v1/groundwater-monitoring-wells';
export const seriesPath = (tube: string, from = '2024-01-01T00:00:00Z', to = '2024-02-01T00:00:00Z') =>
  `/v1/groundwater-monitoring-tubes/${tube}/measurements?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;

const STRONG_TAG = /^"[A-Za-z0-9_-]+"$/;
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** A day of hourly rows of `tube` in January 2024, values shifted by `shift`. */
export function januaryRows(tube: string, shift = 0): [string, string, string][] {
  return Array.from({ length: 24 }, (_, hour) => [
    tube,
    `2024-01-02T${String(hour).padStart(2, '0')}:00:00Z`,
    String(hour / 100 + shift),
  ]);
}

/** The registry of the test; `place` adds a location to the well and elevations to TUBE. */
const REGISTRY = (
  unit: string,
  number: string,
  place: {
    location?: RegistryLocation;
    elevations?: Partial<Record<'screenTop' | 'screenBottom', number>>;
  } = {},
): RegistryWell[] => [
  {
    name: 'W',
    ...(place.location ? { location: place.location } : {}),
    tubes: [
      { identifier: TUBE, number, unit, ...place.elevations },
      { identifier: OTHER, number: '2' },
    ],
  },
];

/** What a 304 repeats of its 200. */
interface RepeatedFields {
  etag: string;
  lastModified: string;
  vary: string;
}

/**
 * The validators of a 200, checked for form (a strong tag unless `tag` says otherwise); the same
 * response's tag and date, and its Vary.
 */
export function validatorsOf(t: Test, response: HttpResponse, tag = STRONG_TAG): RepeatedFields {
  t.equal(response.status, 200, 'a 200');
  const etag = String(response.headers.etag);
  const lastModified = String(response.headers['last-modified']);
  t.match(etag, tag, tag === STRONG_TAG ? 'a strong ETag' : 'an ETag of its form');
  t.match(lastModified, HTTP_DATE, 'Last-Modified is an HTTP-date');
  t.equal(response.headers['cache-control'], 'private, no-cache');
  return { etag, lastModified, vary: String(response.headers.vary) };
}

/** A 304 as the contract says: no body, the same validators, Cache-Control, Vary and API-Version. */
export function checkNotModified(t: Test, response: HttpResponse, of: RepeatedFields) {
  t.equal(response.status, 304, 'a 304');
  t.equal(response.body, '', 'no body');
  t.equal(response.headers.etag, of.etag, 'the same ETag');
  t.equal(response.headers['last-modified'], of.lastModified, 'the same Last-Modified');
  t.equal(response.headers['cache-control'], 'private, no-cache');
  t.equal(response.headers.vary, of.vary, 'the same Vary');
  t.ok(response.headers['api-version'], 'API-Version');
  t.ok(response.headers['x-request-id'], 'X-Request-Id');
  t.notOk(response.headers['content-type'], 'no Content-Type');
  t.notOk(response.headers['content-encoding'], 'no Content-Encoding');
}

export async function provesConditionalRequests(
  t: Test,
  api: TestApi,
  sql: Sql,
  importRows: ImportRows,
): Promise<void> {
  await upsertRegistry(sql, REGISTRY('m', '1'));
  const reader = await createKey(sql, { name: 'reader', tubeIdentifiers: [TUBE], allTubes: false });
  rememberKey(reader.key);
  const key = { 'x-api-key': reader.key };
  await importRows(januaryRows(TUBE));
  const path = seriesPath(TUBE);
  const series = (headers: Record<string, string> = {}) => get(api.base, path, { ...key, ...headers });
  const discovery = (headers: Record<string, string> = {}) => get(api.base, WELLS, { ...key, ...headers });
  const registryVersion = async () =>
    (await sql<{ version: string }[]>`select version::text from registry_version`)[0]!.version;

  const first = await series();
  const validators = validatorsOf(t, first);
  t.equal(JSON.parse(first.body).measurements.length, 24);

  t.test('HEAD gives the validators of GET; GET and HEAD both answer 304', async (t) => {
    const head = await send(api.base, 'HEAD', path, key);
    t.same(validatorsOf(t, head), validators);
    checkNotModified(t, await series({ 'if-none-match': validators.etag }), validators);
    checkNotModified(
      t,
      await send(api.base, 'HEAD', path, { ...key, 'if-none-match': validators.etag }),
      validators,
    );
  });

  t.test('If-None-Match: weak comparison, a list, *; another tag is a 200', async (t) => {
    checkNotModified(t, await series({ 'if-none-match': `W/${validators.etag}` }), validators);
    checkNotModified(t, await series({ 'if-none-match': `"old", ${validators.etag}, W/"x"` }), validators);
    checkNotModified(t, await series({ 'if-none-match': '*' }), validators);
    const other = await series({ 'if-none-match': '"old", W/"x"' });
    t.same(validatorsOf(t, other), validators);
    t.equal(JSON.parse(other.body).measurements.length, 24, 'the whole series');
  });

  t.test('If-Modified-Since at one-second precision, only without If-None-Match', async (t) => {
    const lastModified = Date.parse(validators.lastModified);
    const secondBefore = new Date(lastModified - 1000).toUTCString();
    checkNotModified(t, await series({ 'if-modified-since': validators.lastModified }), validators);
    checkNotModified(
      t,
      await series({ 'if-modified-since': new Date(Date.now()).toUTCString() }),
      validators,
    );
    t.equal((await series({ 'if-modified-since': secondBefore })).status, 200, 'a second earlier: 200');
    const both = await series({ 'if-none-match': '"old"', 'if-modified-since': validators.lastModified });
    t.equal(both.status, 200, 'If-None-Match decides when both are given');
    // RFC 850 and asctime forms are HTTP-dates too.
    const date = new Date(lastModified);
    const asctime = date.toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) ([\d:]+) GMT$/, '$1 $3 $2 $5 $4');
    checkNotModified(
      t,
      await series({ 'if-modified-since': asctime.replace(/ 0(\d) /, '  $1 ') }),
      validators,
    );
  });

  t.test('malformed preconditions are ignored: no 4xx, no 5xx', async (t) => {
    const malformed: Record<string, string>[] = [
      { 'if-none-match': '"unterminated' },
      { 'if-none-match': `${validators.etag} junk` },
      { 'if-none-match': 'x'.repeat(10_000) },
      { 'if-modified-since': 'yesterday' },
      { 'if-modified-since': 'Sun, 31 Feb 2099 00:00:00 GMT' },
      { 'if-modified-since': '2099-01-01T00:00:00Z' },
    ];
    for (const headers of malformed) {
      t.equal((await series(headers)).status, 200, JSON.stringify(headers).slice(0, 60));
    }
    // A malformed If-None-Match is as if absent: If-Modified-Since then applies.
    checkNotModified(
      t,
      await series({ 'if-none-match': '"open', 'if-modified-since': validators.lastModified }),
      validators,
    );
  });

  t.test('the tag tells codings and intervals apart, and not offsets of one instant', async (t) => {
    const tags = new Set<string>([validators.etag]);
    for (const coding of ['gzip', 'br']) {
      const encoded = await series({ 'accept-encoding': coding });
      t.equal(encoded.headers['content-encoding'], coding);
      tags.add(validatorsOf(t, encoded).etag);
      // The identity tag does not make a gzip response current, nor the other way round.
      t.equal((await series({ 'accept-encoding': coding, 'if-none-match': validators.etag })).status, 200);
      checkNotModified(
        t,
        await series({ 'accept-encoding': coding, 'if-none-match': validatorsOf(t, encoded).etag }),
        { ...validators, etag: validatorsOf(t, encoded).etag },
      );
    }
    const longer = await get(api.base, seriesPath(TUBE, '2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z'), key);
    tags.add(validatorsOf(t, longer).etag);
    const daily = `${seriesPath(TUBE, '2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z')}&aggregate=P1D`;
    const aggregated = validatorsOf(t, await get(api.base, daily, key));
    tags.add(aggregated.etag);
    t.equal((await get(api.base, daily, { ...key, 'if-none-match': validators.etag })).status, 200);
    checkNotModified(t, await get(api.base, daily, { ...key, 'if-none-match': aggregated.etag }), aggregated);
    t.equal(tags.size, 5, 'identity, gzip, br, another interval and an aggregate: five tags');
    const offset = await get(
      api.base,
      seriesPath(TUBE, '2024-01-01T01:00:00+01:00', '2024-02-01T00:00:00Z'),
      key,
    );
    t.equal(validatorsOf(t, offset).etag, validators.etag, 'the same interval written with an offset');
  });

  t.test('a 304 of a series reads no measurement', async (t) => {
    // With measurements out of reach, a read fails (a 500 before the first byte), so a 304 proves none.
    await sql`alter table measurements rename to measurements_out_of_reach`;
    try {
      checkNotModified(t, await series({ 'if-none-match': validators.etag }), validators);
      t.equal((await series({ 'if-none-match': '"old"' })).status, 500, 'the control: a 200 would read');
    } finally {
      await sql`alter table measurements_out_of_reach rename to measurements`;
    }
    t.equal((await series()).status, 200);
  });

  const discovered = validatorsOf(t, await discovery());

  t.test('discovery: 304 by tag and by date', async (t) => {
    checkNotModified(t, await discovery({ 'if-none-match': discovered.etag }), discovered);
    checkNotModified(t, await discovery({ 'if-modified-since': discovered.lastModified }), discovered);
    checkNotModified(
      t,
      await send(api.base, 'HEAD', WELLS, { ...key, 'if-none-match': discovered.etag }),
      discovered,
    );
  });

  t.test('imports that change nothing keep every validator', async (t) => {
    const version = await registryVersion();
    await importRows(januaryRows(TUBE));
    await upsertRegistry(sql, REGISTRY('m', '1'));
    t.equal(await registryVersion(), version, 'the registry version stays');
    await sleep(VERSION_FRESH_MS);
    checkNotModified(t, await series({ 'if-none-match': validators.etag }), validators);
    checkNotModified(t, await discovery({ 'if-none-match': discovered.etag }), discovered);
    // Another tube's rows are not this tube's.
    await importRows(januaryRows(OTHER));
    checkNotModified(t, await series({ 'if-none-match': validators.etag }), validators);
  });

  t.test("a hidden tube's change moves no validator of the key's discovery", async (t) => {
    const version = await registryVersion();
    // Last-Modified is in whole seconds: the change comes in a later one.
    await sleep(1000);
    await sql`update tubes set number = number || 'x', ground_level = 7 where identifier = ${OTHER}`;
    t.not(await registryVersion(), version, 'the registry changed');
    await sleep(VERSION_FRESH_MS);
    const after = await discovery();
    t.same(validatorsOf(t, after), discovered, 'the same ETag and Last-Modified');
    checkNotModified(t, await discovery({ 'if-modified-since': discovered.lastModified }), discovered);
    await sql`update tubes set number = rtrim(number, 'x') where identifier = ${OTHER}`;
  });

  let current = validators;
  const changedSeries = async (t: Test, what: string) => {
    const after = await series({ 'if-none-match': current.etag });
    const next = validatorsOf(t, after);
    t.not(next.etag, current.etag, `${what}: a new tag`);
    t.ok(Date.parse(next.lastModified) >= Date.parse(current.lastModified), `${what}: not an earlier date`);
    current = next;
    return after;
  };

  t.test('a changed value changes the series validators', async (t) => {
    await importRows([[TUBE, '2024-01-02T05:00:00Z', '9.5']]);
    const after = await changedSeries(t, 'a changed value');
    t.equal(JSON.parse(after.body).measurements[5].value, 9.5);
  });

  t.test('a unit change changes the series tag and discovery, which shows the unit', async (t) => {
    await upsertRegistry(sql, REGISTRY('cm', '1'));
    t.equal(JSON.parse((await changedSeries(t, 'a unit change')).body).unit, 'cm');
    await sleep(VERSION_FRESH_MS);
    const after = await discovery({ 'if-none-match': discovered.etag });
    t.not(validatorsOf(t, after).etag, discovered.etag);
    t.equal(JSON.parse(after.body)[0].tubes[0].unit, 'cm');
  });

  t.test('a number change changes both', async (t) => {
    await upsertRegistry(sql, REGISTRY('cm', '1a'));
    await changedSeries(t, 'a number change');
    await sleep(VERSION_FRESH_MS);
    const after = await discovery({ 'if-none-match': discovered.etag });
    t.not(validatorsOf(t, after).etag, discovered.etag);
  });

  t.test("a location or an elevation changes discovery's validators, not the series'", async (t) => {
    for (const place of [
      { location: { longitude: 5.1, latitude: 52.1 } },
      { location: { longitude: 5.1, latitude: 52.1 }, elevations: { screenTop: -1, screenBottom: -2.5 } },
      {},
    ]) {
      const before = validatorsOf(t, await discovery());
      // Last-Modified is in whole seconds: the change comes in a later one.
      await sleep(1000);
      await upsertRegistry(sql, REGISTRY('cm', '1a', place));
      checkNotModified(t, await series({ 'if-none-match': current.etag }), current);
      checkNotModified(t, await series({ 'if-modified-since': current.lastModified }), current);
      await sleep(VERSION_FRESH_MS);
      const after = await discovery({ 'if-none-match': before.etag });
      const next = validatorsOf(t, after);
      t.not(next.etag, before.etag, `${JSON.stringify(place)}: a new tag`);
      t.ok(Date.parse(next.lastModified) > Date.parse(before.lastModified), 'a later Last-Modified');
      const [well] = JSON.parse(after.body);
      t.same(well.location?.coordinates, place.location && [5.1, 52.1]);
      t.equal(well.tubes[0].screenBottom, place.elevations?.screenBottom);
    }
  });

  t.test("a grant changes the key's discovery validators", async (t) => {
    const before = validatorsOf(t, await discovery());
    // Last-Modified is in whole seconds: the grant comes in a later one.
    await sleep(1000);
    await grantKey(sql, reader.keyId, [OTHER]);
    const after = await discovery({ 'if-none-match': before.etag, 'if-modified-since': before.lastModified });
    const next = validatorsOf(t, after);
    t.not(next.etag, before.etag);
    t.ok(Date.parse(next.lastModified) > Date.parse(before.lastModified), 'a later Last-Modified');
    t.equal(
      (await discovery({ 'if-modified-since': before.lastModified })).status,
      200,
      'If-Modified-Since sees it',
    );
  });

  t.test('a revoked key is a 401, never a 304', async (t) => {
    await sql`update api_keys set revoked_at = now() where id = ${reader.keyId}`;
    t.equal((await series({ 'if-none-match': '*' })).status, 401);
    t.equal((await discovery({ 'if-none-match': '*' })).status, 401);
  });
}

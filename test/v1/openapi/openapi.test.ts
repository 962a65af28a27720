/**
 * /v1/openapi.json: a valid OpenAPI 3.1 document, public, cacheable, and true to the service: real
 * responses of every status are checked against the schemas, headers and examples it documents. Its
 * 3.0 rendering at /v1/ogc/api (the OGC service-desc): valid 3.0, the same operations, served alike.
 */
import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { tableFromIPC } from 'apache-arrow';
import type { Test } from 'tap';
import t from 'tap';
import type { Problem } from '../../../src/http/problems/schema.js';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, type HttpResponse, send } from '../../helpers/http.js';
import { CONDITIONAL, INTERVAL_QUERY, parameterList } from '../../helpers/openapi.js';
import { scriptedLimits } from '../../helpers/scriptedLimits.js';

const DOCUMENT = '/v1/openapi.json';
const DOCUMENT_30 = '/v1/ogc/api';
const DAY = '?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';

type Row = Record<string, unknown>;
interface SeriesExample {
  tubeIdentifier: string;
  unit: string;
  verticalDatum: string;
  measurements: Row[];
}
/** A JSON example of a series, of a network of series, or of latest (its rows). */
type JsonExample = SeriesExample | { series: SeriesExample[] } | Row[];

/**
 * A JSON example as the Arrow stream writes it: its head (the schema's metadata) and its rows, a
 * network's with the identifier, unit and vertical datum of their tube on each.
 */
function asTable(example: JsonExample): { head: Row; rows: Row[] } {
  // Latest: rows alone, no head.
  if (Array.isArray(example)) return { head: {}, rows: example };
  if ('series' in example) {
    const { series, ...head } = example;
    const rows = series.flatMap(({ tubeIdentifier, unit, verticalDatum, measurements }) =>
      measurements.map((m) => ({ tubeIdentifier, ...m, unit, verticalDatum })),
    );
    return { head, rows };
  }
  const { measurements, ...head } = example;
  return { head, rows: measurements };
}

const SERIES_RESPONSES = ['200', '304', '400', '401', '403', '404', '429', '4XX', '500', '503'];

interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  responses: Record<
    string,
    { $ref?: string; headers?: Record<string, unknown>; content?: Record<string, unknown> }
  >;
}

t.test('the OpenAPI document', async (t) => {
  const limits = scriptedLimits();
  const api = await startApi(t, { limits });
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Well', [{ number: '1' }]);
  await addMeasurements(sql, tube!.id, [['2024-01-01T00:00:00.5Z', '-1.25']]);
  const reader = await addKey(sql, { tubeIds: [tube!.id] });
  const nothing = await addKey(sql);

  const served = await get(api.base, DOCUMENT);
  const document = JSON.parse(served.body);
  const resolve = <T>(value: { $ref?: string } & T): T =>
    value.$ref
      ? resolve(
          value.$ref
            .slice(2)
            .split('/')
            // biome-ignore lint/suspicious/noExplicitAny: walks an arbitrary JSON document by a JSON pointer
            .reduce((node: any, key: string) => node[key], document),
        )
      : value;

  t.test('is public, valid OpenAPI 3.1, and counts against no limit', async (t) => {
    t.equal(served.status, 200);
    t.equal(served.headers['content-type'], 'application/json');
    t.same(limits.admitted, [], 'no admission asked for the document');
    t.same(limits.failedAuth, []);
    const validator = new Validator();
    const result = await validator.validate(document);
    t.same(result.errors ?? [], [], 'no validation errors');
    t.ok(result.valid);
    t.equal(validator.version, '3.1');
    t.equal(document.info.version, '1.4.0');
  });

  t.test('documents what a client can call: the GET of every path, HEAD and 405 said once', async (t) => {
    t.same(Object.keys(document.paths).sort(), [
      '/groundwater-monitoring-measurements',
      '/groundwater-monitoring-measurements/latest',
      '/groundwater-monitoring-tubes/{tubeIdentifier}/measurements',
      '/groundwater-monitoring-wells',
      '/ogc',
      '/ogc/api',
      '/ogc/collections',
      '/ogc/collections/latest/items',
      '/ogc/collections/latest/items/{featureId}',
      '/ogc/collections/measurements/items',
      '/ogc/collections/measurements/items/{featureId}',
      '/ogc/collections/tubes/items',
      '/ogc/collections/tubes/items/{featureId}',
      '/ogc/collections/{collectionId}',
      '/ogc/conformance',
      '/openapi.json',
    ]);
    // Each collection's items path with its own page sizes; the tube collections' is also the shared
    // `components.parameters.limit`, the one place QGIS 3.22 reads them.
    const shared = document.components.parameters.limit;
    t.same(
      shared.schema,
      { type: 'integer', minimum: 1, maximum: 10_000, default: 1000 },
      'the shared limit',
    );
    for (const [collection, maximum] of [
      ['tubes', 10_000],
      ['latest', 10_000],
      ['measurements', 50_000],
    ] as const) {
      const parameters = document.paths[`/ogc/collections/${collection}/items`].get.parameters;
      const limit = parameters
        .map((parameter: { $ref?: string }) =>
          parameter.$ref === '#/components/parameters/limit' ? shared : parameter,
        )
        .find((parameter: { name: string }) => parameter.name === 'limit');
      t.same(limit.schema, { type: 'integer', minimum: 1, maximum, default: 1000 }, `${collection}: limit`);
    }
    for (const path of ['/ogc', '/ogc/conformance']) {
      t.same(document.paths[path].get.security, [], `${path} is public`);
    }
    t.same(document.servers, [{ url: '/v1', description: document.servers[0].description }]);
    const tagNames = document.tags.map((tag: { name: string; description: string }) => {
      t.ok(tag.description, `tag ${tag.name} has a description`);
      return tag.name;
    });
    for (const [path, item] of Object.entries<Record<string, Operation>>(document.paths)) {
      t.same(Object.keys(item), ['get'], `${path}: only GET, no HEAD twin and no operation that is only 405`);
      const { operationId, tags, summary, description } = item.get!;
      t.ok(operationId && summary && description, `${path}: operationId, summary and description`);
      t.ok(tags.length > 0 && tags.every((tag) => tagNames.includes(tag)), `${path}: tags defined above`);
      for (const [status, response] of Object.entries(item.get!.responses)) {
        for (const [mediaType, content] of Object.entries(resolve(response).content ?? {})) {
          const { example, examples } = content as { example?: unknown; examples?: object };
          t.ok(example ?? examples, `${path} ${status} ${mediaType}: an example`);
        }
      }
    }
    const methods = /GET, HEAD on every path.*HEAD answers as GET.*405 with\s`Allow: GET, HEAD`/s;
    t.match(document.info.description, methods, 'HEAD and 405 are said once, in the overview');
    const packageJson = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8'));
    t.same(document.info.license, { name: packageJson.license, identifier: packageJson.license });
    t.ok(document.info.contact.name, 'a contact');
    for (const [name, schema] of Object.entries<{ description?: string }>(document.components.schemas)) {
      t.ok(schema.description, `schema ${name} has a description`);
    }
    const measurements = document.paths['/groundwater-monitoring-tubes/{tubeIdentifier}/measurements'].get;
    t.same(Object.keys(measurements.responses).sort(), SERIES_RESPONSES);
    t.same(parameterList(measurements), [
      ['tubeIdentifier', 'path', true],
      ...INTERVAL_QUERY,
      ...CONDITIONAL,
    ]);
    const wells = document.paths['/groundwater-monitoring-wells'].get;
    for (const operation of [measurements, wells]) {
      t.same(Object.keys(operation.responses['304'].headers).sort(), [
        'API-Version',
        'Cache-Control',
        'ETag',
        'Last-Modified',
        'RateLimit',
        'RateLimit-Policy',
        'X-Request-Id',
      ]);
    }
    t.equal(measurements.parameters[1].schema.format, 'date-time');
    t.same(measurements.parameters[3].schema.enum, ['PT15M', 'PT1H', 'P1D', 'P7D']);
    t.same(document.paths['/openapi.json'].get.security, [], 'the document needs no key');
    t.same(document.components.securitySchemes.ApiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: document.components.securitySchemes.ApiKey.description,
    });
  });

  t.test('documents the network endpoint: tubes, changedSince, bbox, Sync-Token and 410', async (t) => {
    const network = document.paths['/groundwater-monitoring-measurements'].get;
    t.same(parameterList(network), [
      ...INTERVAL_QUERY,
      ['tubes', 'query', false],
      ['changedSince', 'query', false],
      ['bbox', 'query', false],
      ...CONDITIONAL,
    ]);
    t.same(network.parameters[3].schema.enum, ['json', 'csv', 'arrow'], 'format: the three formats');
    t.same(Object.keys(network.responses).sort(), [...SERIES_RESPONSES, '410'].sort(), 'and 410');
    const gone = resolve(network.responses['410']);
    t.ok(gone.content?.['application/problem+json'], '410: a problem');
    const syncToken = network.responses['200'].headers['Sync-Token'];
    t.equal(syncToken.required, true, 'every 200 carries Sync-Token');
    t.match(syncToken.schema.examples[0], /^[A-Za-z0-9_-]{1,200}$/, 'an example token');
  });

  t.test('documents the Arrow stream as a binary body whose examples read as the JSON', async (t) => {
    const arrow = 'application/vnd.apache.arrow.stream';
    const streams = Object.entries<Record<string, Operation>>(document.paths).filter(
      ([, item]) => item.get!.responses['200']?.content?.[arrow],
    );
    t.same(
      streams.map(([path]) => path).sort(),
      [
        '/groundwater-monitoring-measurements',
        '/groundwater-monitoring-measurements/latest',
        '/groundwater-monitoring-tubes/{tubeIdentifier}/measurements',
      ],
      'every endpoint of measurements',
    );
    for (const [path, item] of streams) {
      const content = item.get!.responses['200']!.content!;
      const { schema, examples } = content[arrow] as {
        schema: { type: string; contentMediaType: string };
        examples: Record<string, { value: string }>;
      };
      t.same([schema.type, schema.contentMediaType], ['string', arrow], `${path}: a string of raw bytes`);
      const json = content['application/json'] as { examples: Record<string, { value: JsonExample }> };
      t.same(
        Object.keys(examples),
        Object.keys(json.examples),
        `${path}: an Arrow example beside each JSON one`,
      );
      for (const [name, { value }] of Object.entries(examples)) {
        const table = tableFromIPC(Buffer.from(value, 'base64'));
        const { head, rows } = asTable(json.examples[name]!.value);
        t.same(Object.fromEntries(table.schema.metadata), head, `${path} ${name}: the head as metadata`);
        const read = table.toArray().map((row) => {
          const { observedAt, count, ...rest } = row.toJSON();
          return {
            ...rest,
            // apache-arrow reads timestamps as milliseconds; the examples are whole seconds.
            observedAt: new Date(Number(observedAt)).toISOString().replace('.000Z', 'Z'),
            ...(count !== undefined && { count: Number(count) }),
          };
        });
        t.same(read, rows, `${path} ${name}: the JSON example's measurements`);
      }
    }
  });

  t.test('writes down the decisions the contract left open', async (t) => {
    const text = JSON.stringify(document);
    for (const decision of [
      '"measurements\\": []', // empty interval
      'no pagination',
      '366 × 86,400 seconds exactly',
      'may read no tube at all', // when 403
      'public (no key)',
      'Unknown query parameters are ignored',
      'given twice is 400',
      '%2B',
      'case-insensitively',
      'Allow: GET, HEAD',
      'natural order',
      'Retry-After',
    ]) {
      t.ok(text.toLowerCase().includes(decision.toLowerCase()), `mentions: ${decision}`);
    }
  });

  t.test('its 3.0 rendering: valid OpenAPI 3.0, the same operations, public', async (t) => {
    const served30 = await get(api.base, `${DOCUMENT_30}?api_key=${reader.key}`);
    t.equal(served30.status, 200, 'api_key ignored');
    t.equal(served30.headers['content-type'], 'application/vnd.oai.openapi+json;version=3.0');
    t.same(limits.admitted, [], 'no admission asked for either rendering');
    t.same(limits.failedAuth, []);
    const rendering = JSON.parse(served30.body);
    const validator = new Validator();
    const result = await validator.validate(rendering);
    t.same(result.errors ?? [], [], 'no validation errors');
    t.ok(result.valid);
    t.equal(validator.version, '3.0');
    t.equal(rendering.openapi, '3.0.3');
    t.equal(rendering.info.version, document.info.version);
    const operations = (paths: Record<string, { get: { operationId: string; parameters?: unknown } }>) =>
      Object.entries(paths).map(([path, { get }]) => [path, get.operationId]);
    t.same(operations(rendering.paths), operations(document.paths), 'every path, describing itself too');
    t.same(
      rendering.components.parameters,
      document.components.parameters,
      'the shared limit, as QGIS reads it',
    );
    const limitOf = (paths: Record<string, { get: { parameters: { name?: string }[] } }>, path: string) =>
      paths[path]!.get.parameters.find((parameter) => parameter.name === 'limit');
    for (const collection of ['tubes', 'latest', 'measurements']) {
      const path = `/ogc/collections/${collection}/items`;
      t.same(limitOf(rendering.paths, path), limitOf(document.paths, path), `${path}: its limit`);
    }
    t.notMatch(
      served30.body,
      /"(const|contentMediaType|propertyNames)":|"type":\[/,
      'no keyword of 3.1 only',
    );
  });

  /** A rendering of the document, as a cache asks for it again. */
  const conditional = async (t: Test, path: string) => {
    const served = await get(api.base, path);
    const etag = served.headers.etag as string;
    t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong ETag');
    t.match(served.headers['cache-control'], /max-age=\d+/);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const response = await get(api.base, path, { 'if-none-match': header });
      t.equal(response.status, 304, `${path} If-None-Match: ${header}`);
      t.equal(response.body, '');
      t.equal(response.headers.etag, etag);
      t.equal(response.headers['api-version'], '1.4.0');
      t.ok(response.headers['cache-control']);
    }
    const changed = await get(api.base, path, { 'if-none-match': '"something-else"' });
    t.equal(changed.status, 200);
    t.equal(changed.body, served.body, 'the same document every time');
    const head = await send(api.base, 'HEAD', path);
    t.equal(head.status, 200);
    t.equal(head.headers['content-length'], String(Buffer.byteLength(served.body)));
    t.equal(head.body, '');
  };

  t.test('ETag, Cache-Control and If-None-Match, on both renderings', async (t) => {
    for (const path of [DOCUMENT, DOCUMENT_30]) await conditional(t, path);
  });

  t.test('real responses of every status match the documented schemas and headers', async (t) => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // ajv-formats is CommonJS: its plugin is the default export's `default`.
    addFormats.default(ajv);
    ajv.addSchema(document, 'openapi');

    const check = (operation: Operation, response: HttpResponse, name: string) => {
      const { responses } = operation;
      const status = String(response.status);
      const documented = resolve((responses[status] ?? responses[`${status[0]}XX`])!);
      t.ok(documented, `${name}: status ${response.status} is documented`);
      for (const [header, spec] of Object.entries(documented.headers ?? {})) {
        const { required } = resolve(spec as { required?: boolean });
        if (required) t.ok(response.headers[header.toLowerCase()], `${name}: header ${header}`);
      }
      if (response.body === '') return;
      const mediaType = String(response.headers['content-type']);
      const content = documented.content?.[mediaType] as { schema: { $ref?: string } } | undefined;
      t.ok(content, `${name}: ${mediaType} is documented for ${response.status}`);
      if (!content?.schema.$ref) return;
      const validate = ajv.getSchema(`openapi${content.schema.$ref}`)!;
      t.ok(validate(JSON.parse(response.body)), `${name}: body matches ${content.schema.$ref}`);
      t.same(validate.errors ?? [], []);
    };
    // The examples are what the service writes: a real answer equals its example, the path aside.
    const example = (operation: Operation, status: number) =>
      (resolve(operation.responses[String(status)]!).content as Record<string, { example: Problem }>)[
        'application/problem+json'
      ]!.example;
    const likeExample = (operation: Operation, response: HttpResponse, name: string) => {
      const { instance, ...body } = JSON.parse(response.body);
      const { instance: exampleInstance, ...expected } = example(operation, response.status);
      t.same(body, expected, `${name}: as its example`);
      t.equal(typeof instance, typeof exampleInstance);
    };

    const wellsOperation = document.paths['/groundwater-monitoring-wells'].get;
    const seriesOperation = document.paths['/groundwater-monitoring-tubes/{tubeIdentifier}/measurements'].get;
    const series = (id: string, query = DAY, key = reader.key) =>
      get(api.base, `/v1/groundwater-monitoring-tubes/${id}/measurements${query}`, { 'x-api-key': key });

    const wells = await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': reader.key });
    t.equal(wells.status, 200);
    t.ok(wells.headers.ratelimit && wells.headers['ratelimit-policy'], 'RateLimit headers on success');
    check(wellsOperation, wells, 'wells 200');
    const wellsHead = await send(api.base, 'HEAD', '/v1/groundwater-monitoring-wells', {
      'x-api-key': reader.key,
    });
    t.equal(wellsHead.status, 200);
    check(wellsOperation, wellsHead, 'wells HEAD 200, as GET without the body');
    const unauthorized = await get(api.base, '/v1/groundwater-monitoring-wells');
    check(wellsOperation, unauthorized, 'wells 401');
    t.same(JSON.parse(unauthorized.body), example(wellsOperation, 401), 'wells 401: its example exactly');
    const forbidden = await get(api.base, '/v1/groundwater-monitoring-wells', { 'x-api-key': nothing.key });
    check(wellsOperation, forbidden, 'wells 403');
    t.same(JSON.parse(forbidden.body), example(wellsOperation, 403), 'wells 403: its example exactly');
    t.same(parameterList(wellsOperation), [
      ['format', 'query', false],
      ['bbox', 'query', false],
      ...CONDITIONAL,
    ]);
    const geojson = await get(api.base, '/v1/groundwater-monitoring-wells?format=geojson', {
      'x-api-key': reader.key,
    });
    t.equal(geojson.headers['content-type'], 'application/geo+json');
    check(wellsOperation, geojson, 'wells 200, GeoJSON');
    const boxed = await get(api.base, '/v1/groundwater-monitoring-wells?bbox=-180,-90,180,90', {
      'x-api-key': reader.key,
    });
    check(wellsOperation, boxed, 'wells 200, bbox');
    const badBox = await get(api.base, '/v1/groundwater-monitoring-wells?bbox=5.6,51.8,4.2,52.6', {
      'x-api-key': reader.key,
    });
    check(wellsOperation, badBox, 'wells 400');
    likeExample(wellsOperation, badBox, 'wells 400');

    const ok = await series(tube!.identifier);
    t.equal(ok.status, 200);
    check(seriesOperation, ok, 'series 200');
    const csv = await series(tube!.identifier, `${DAY}&format=csv`);
    t.equal(csv.status, 200);
    check(seriesOperation, csv, 'series 200, CSV');
    const empty = await series(tube!.identifier, '?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z');
    t.same(JSON.parse(empty.body).measurements, []);
    check(seriesOperation, empty, 'series 200, empty');
    check(seriesOperation, await series(tube!.identifier, '?from=x'), 'series 400');
    const reversed = await series(tube!.identifier, '?from=2024-01-02T00:00:00Z&to=2024-01-01T00:00:00Z');
    check(seriesOperation, reversed, 'series 400, to before from');
    likeExample(seriesOperation, reversed, 'series 400, to before from');
    check(seriesOperation, await series(tube!.identifier, DAY, 'gw_not-a-key'), 'series 401');
    check(seriesOperation, await series(tube!.identifier, DAY, nothing.key), 'series 403');
    const unknown = await series('00000000-0000-4000-8000-000000000000');
    check(seriesOperation, unknown, 'series 404');
    likeExample(seriesOperation, unknown, 'series 404');
    const expecting = await get(
      api.base,
      `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements${DAY}`,
      {
        'x-api-key': reader.key,
        expect: 'something-else',
      },
    );
    t.equal(expecting.status, 417);
    check(seriesOperation, expecting, 'series 417, another client error');
    limits.refuseNext('rate', 7);
    const limited = await series(tube!.identifier);
    t.equal(limited.status, 429);
    t.equal(limited.headers['retry-after'], '7');
    check(seriesOperation, limited, 'series 429');
    // Said once in the overview: any other method is 405 with Allow and a problem document.
    const notAllowed = await send(
      api.base,
      'POST',
      `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements`,
    );
    t.equal(notAllowed.status, 405);
    t.equal(notAllowed.headers.allow, 'GET, HEAD');
    t.equal(notAllowed.headers['content-type'], 'application/problem+json');
    const problem = ajv.getSchema('openapi#/components/schemas/Problem')!;
    t.ok(problem(JSON.parse(notAllowed.body)), 'series 405: body matches Problem');

    await sql`alter table tubes rename to tubes_elsewhere`;
    t.teardown(() => sql`alter table tubes_elsewhere rename to tubes`);
    const failed = await series(tube!.identifier);
    t.equal(failed.status, 500);
    check(seriesOperation, failed, 'series 500');
  });
});

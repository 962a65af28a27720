/**
 * dataPart: a data endpoint's part from one description. The served parts are checked against the
 * service in openapi.test.ts; this checks what none of them uses yet: an endpoint that answers no
 * conditional request, several parts under one tag (the paths of one resource), and a public part.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import t from 'tap';
import { z } from 'zod';
import { loadSettings } from '../../../src/config.js';
import { invalidParameter } from '../../../src/http/problems/problems.js';
import { dataPart } from '../../../src/v1/openapi/dataPart.js';
import { openApiDocument } from '../../../src/v1/openapi/document.js';

const TAG = { name: 'Things', description: 'Things, in pages.' };

/** The part of one kind of thing: its own path, its own `limit`. */
const thingsPart = (kind: string, maximum: number) =>
  dataPart({
    url: `/things/${kind}/items`,
    tag: TAG,
    operationId: `get${kind}`,
    summary: `A page of ${kind}`,
    description: `The ${kind}, a page at a time.`,
    query: z.object({
      limit: z
        .int()
        .min(1)
        .max(maximum)
        .default(10)
        .meta({ param: { description: 'Page size.' } }),
    }),
    conditional: false,
    ok: {
      description: 'A page.',
      content: { 'application/json': { schema: z.array(z.string()), example: ['a'] } },
    },
    problems: {
      '400': {
        description: '`limit` is not a whole number of at least 1.',
        problem: invalidParameter('limit', 'must be at least 1'),
      },
    },
  });

t.test('parts with one tag, answering no conditional request', async (t) => {
  const made = openApiDocument(loadSettings({}), [thingsPart('small', 100), thingsPart('large', 5000)]);
  // As it is served: JSON.
  const document = JSON.parse(JSON.stringify(made));
  const result = await new Validator().validate(document);
  t.same(result.errors ?? [], [], 'a valid OpenAPI document');
  t.same(document.tags, [TAG], 'the shared tag listed once');
  t.same(Object.keys(document.paths), ['/things/small/items', '/things/large/items']);

  const small = document.paths['/things/small/items'].get;
  const large = document.paths['/things/large/items'].get;
  t.same(
    [small, large].map((operation) => operation.tags),
    [['Things'], ['Things']],
  );
  t.same(
    small.parameters.map(({ name, in: where }: { name: string; in: string }) => [name, where]),
    [['limit', 'query']],
    'no conditional request headers',
  );
  t.same(
    [small, large].map((operation) => operation.parameters[0].schema),
    [
      { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      { type: 'integer', minimum: 1, maximum: 5000, default: 10 },
    ],
    'each path its own limit',
  );
  t.same(Object.keys(small.responses), ['200', '400', '401', '403', '429', '500', '503', '4XX'], 'no 304');
  t.same(
    Object.keys(small.responses['200'].headers),
    ['API-Version', 'X-Request-Id', 'RateLimit', 'RateLimit-Policy'],
    'no validators',
  );
  t.equal(
    small.responses['400'].content['application/problem+json'].example.instance,
    '/v1/things/small/items',
  );
});

t.test('a public part: no key, no limit', async (t) => {
  const made = openApiDocument(loadSettings({}), [
    dataPart({
      url: '/things',
      tag: TAG,
      operationId: 'getThingsIndex',
      summary: 'Where the things are',
      description: 'Links to the things.',
      query: z.object({}),
      conditional: false,
      public: true,
      ok: {
        description: 'The links.',
        content: { 'application/json': { schema: z.array(z.string()), example: ['/things/small/items'] } },
      },
    }),
  ]);
  const document = JSON.parse(JSON.stringify(made));
  const result = await new Validator().validate(document);
  t.same(result.errors ?? [], [], 'a valid OpenAPI document');
  t.same(document.security, [{ ApiKey: [] }], 'the document asks for the key');
  const operation = document.paths['/things'].get;
  t.same(operation.security, [], 'this operation does not');
  t.same(Object.keys(operation.responses), ['200', '500', '4XX'], 'no 401, 403, 429 or 503');
  t.same(Object.keys(operation.responses['200'].headers), ['API-Version', 'X-Request-Id'], 'no limits');
});

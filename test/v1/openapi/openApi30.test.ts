/**
 * openApi30: the 3.0 rendering of a 3.1 document. The served one is checked in openapi.test.ts (valid
 * 3.0, the same operations) and lint.test.ts (both linters clean); this checks each rewrite on what
 * zod writes for it, that examples and property names are left alone, and that a keyword 3.0 lacks
 * with no rewrite stops the build instead of reaching a 3.0 parser.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import t from 'tap';
import { z } from 'zod';
import { loadSettings } from '../../../src/config.js';
import { dataPart } from '../../../src/v1/openapi/dataPart.js';
import { openApiDocument } from '../../../src/v1/openapi/document.js';
import { openApi30, schema30 } from '../../../src/v1/openapi/openApi30.js';

const Place = z
  .strictObject({ type: z.literal('Point'), coordinates: z.array(z.number()).length(2) })
  .meta({ description: 'A point.' });

/** One of each construct of 3.1 that zod writes and 3.0 says otherwise, with an example of each. */
const Thing = z
  .strictObject({
    kind: z.literal('thing'),
    depth: z.number().nullable(),
    weight: z.number().gt(0).lt(10),
    label: z.string().meta({ examples: ['first', 'second'] }),
    where: Place.nullable().meta({ description: 'Where, or null.' }),
    shape: z.union([z.strictObject({ sides: z.int() }), z.null()]),
    home: Place.meta({ description: 'Where it lives.' }),
    // A property named as a 3.1 keyword: a name, not a keyword.
    const: z.string(),
  })
  .meta({ description: 'A thing.' });

const EXAMPLE = {
  kind: 'thing',
  depth: null,
  weight: 1.5,
  label: 'first',
  where: null,
  shape: null,
  home: { type: 'Point', coordinates: [5, 52] },
  const: 'x',
};

const part = dataPart({
  url: '/things',
  tag: { name: 'Things', description: 'Things.' },
  operationId: 'getThings',
  summary: 'The things',
  description: 'Every thing.',
  query: z.object({}),
  conditional: false,
  public: true,
  ok: {
    description: 'The things.',
    content: { 'application/json': { schema: z.array(Thing), example: [EXAMPLE] } },
  },
  schemas: { Thing, Place },
});

t.test('what zod writes in 3.1, rendered as valid 3.0', async (t) => {
  const document = JSON.parse(JSON.stringify(openApiDocument(loadSettings({}), [part])));
  const rendered = openApi30(document);
  const validator = new Validator();
  const result = await validator.validate(rendered);
  t.same(result.errors ?? [], [], 'a valid OpenAPI 3.0 document');
  t.equal(validator.version, '3.0');
  t.equal(rendered.openapi, '3.0.3');
  t.equal(document.openapi, '3.1.0', 'the 3.1 document is left as it was');
  t.same(rendered.info.license, { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' });

  const { properties } = (rendered.components as { schemas: Record<string, { properties: object }> }).schemas
    .Thing!;
  t.same(properties, {
    kind: { type: 'string', enum: ['thing'] },
    depth: { type: 'number', nullable: true },
    weight: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: true },
    label: { type: 'string', example: 'first' },
    where: {
      description: 'Where, or null.',
      anyOf: [{ $ref: '#/components/schemas/Place' }, { type: 'object', nullable: true, enum: [null] }],
    },
    shape: {
      type: 'object',
      properties: { sides: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 } },
      required: ['sides'],
      additionalProperties: false,
      nullable: true,
    },
    home: { description: 'Where it lives.', allOf: [{ $ref: '#/components/schemas/Place' }] },
    const: { type: 'string' },
  });
  const content = (rendered.paths as Record<string, { get: { responses: Record<string, object> } }>)[
    '/things'
  ]!.get.responses['200'] as { content: Record<string, { example: unknown }> };
  t.same(content.content['application/json']!.example, [EXAMPLE], 'examples are values: left as written');
});

t.test('the other rewrites', async (t) => {
  t.same(
    schema30(
      {
        type: 'object',
        examples: [{}],
        propertyNames: { type: 'string' },
        additionalProperties: { type: ['string', 'null'] },
      },
      '#',
    ),
    { type: 'object', example: {}, additionalProperties: { type: 'string', nullable: true } },
    'propertyNames of strings only says what JSON says',
  );
  t.same(
    schema30({ type: 'string', contentMediaType: 'application/vnd.apache.arrow.stream' }, '#'),
    { type: 'string', format: 'binary' },
    'raw bytes',
  );
  t.same(
    schema30({ anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] }, '#'),
    { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'object', nullable: true, enum: [null] }] },
    'null beside several: a branch of its own',
  );
});

t.test('a keyword 3.0 lacks, with no rewrite, stops the build and says where', async (t) => {
  t.throws(() => schema30({ type: 'array', prefixItems: [{ type: 'number' }] }, '#/x'), {
    message: '#/x/prefixItems: OpenAPI 3.0 has no prefixItems',
  });
  t.throws(() => schema30({ properties: { a: { type: ['string', 'number'] } } }, '#/x'), {
    message: '#/x/properties/a/type: no 3.0 form of type ["string","number"]',
  });
  t.throws(() => schema30({ propertyNames: { pattern: '^a' } }, '#/x'), {
    message: '#/x/propertyNames: no 3.0 form',
  });
  t.throws(() => openApi30({ openapi: '3.1.0', info: {}, webhooks: {} }), {
    message: '#/webhooks: OpenAPI 3.0 has no webhooks',
  });
});

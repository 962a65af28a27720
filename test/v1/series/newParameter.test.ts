/**
 * An optional query parameter added to the measurements query needs no edit outside its feature folder
 * (but the document's assembly): a route with the same machinery as /v1 (v1Routes, the problems'
 * error handler) and the query schema extended by `extra` refuses a bad `extra` with a 400 problem
 * whose `errors` names it, for GET and HEAD, and the document made from the same schema lists `extra`
 * as optional.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import t from 'tap';
import { z } from 'zod';
import { loadSettings } from '../../../src/config.js';
import { formatInstant } from '../../../src/domain/datetime.js';
import { READ_METHODS } from '../../../src/http/hooks/methods.js';
import { INVALID_QUERY_DETAIL, registerProblems } from '../../../src/http/problems/problems.js';
import { MeasurementsQuery } from '../../../src/v1/measurementsQuery.js';
import { dataPart } from '../../../src/v1/openapi/dataPart.js';
import { openApiDocument } from '../../../src/v1/openapi/document.js';
import { v1Routes } from '../../../src/v1/plugin.js';
import { CONDITIONAL, INTERVAL_QUERY, parameterList } from '../../helpers/openapi.js';

const URL = '/series';
const Extended = MeasurementsQuery.safeExtend({
  extra: z.enum(['one', 'two']).optional().meta({ description: 'An extension, as 1.1 adds `format`.' }),
});
const DAY = 'from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z';

t.test('a route whose query schema gains an optional parameter', async (t) => {
  const app = Fastify({ exposeHeadRoutes: false });
  registerProblems(app);
  await app.register(
    async (api) => {
      v1Routes(api);
      api.withTypeProvider<ZodTypeProvider>().route({
        method: READ_METHODS,
        url: URL,
        schema: { querystring: Extended },
        handler: async (request) => {
          const { from, to, extra } = request.query;
          return { from: formatInstant(from), to: formatInstant(to), extra: extra ?? null };
        },
      });
    },
    { prefix: '/v1' },
  );
  t.teardown(() => app.close());
  const ask = (query: string, method: 'GET' | 'HEAD' = 'GET') =>
    app.inject({ method, url: `/v1/series?${query}` });

  t.test('is validated: a bad value is a 400 problem that names it', async (t) => {
    const refused = await ask(`${DAY}&extra=three`);
    t.equal(refused.statusCode, 400);
    t.equal(refused.headers['content-type'], 'application/problem+json');
    const body = refused.json();
    t.equal(body.detail, INVALID_QUERY_DETAIL);
    t.same(Object.keys(body.errors), ['extra']);
    t.match(body.errors.extra[0], /one|two/);

    const repeated = await ask(`${DAY}&extra=one&extra=two`);
    t.equal(repeated.statusCode, 400, 'given twice');
    t.same(Object.keys(repeated.json().errors), ['extra']);

    const everything = await ask('extra=three');
    t.same(Object.keys(everything.json().errors), ['from', 'to', 'extra'], 'in the order of the schema');

    const head = await ask(`${DAY}&extra=three`, 'HEAD');
    t.equal(head.statusCode, 400, 'HEAD is validated as GET is');
    t.equal(head.body, '');
  });

  t.test('is optional, and read when given', async (t) => {
    const without = await ask(DAY);
    t.equal(without.statusCode, 200);
    t.same(without.json(), { from: '2024-01-01T00:00:00Z', to: '2024-01-02T00:00:00Z', extra: null });
    t.equal((await ask(`${DAY}&extra=two`)).json().extra, 'two');
  });

  t.test('is documented as an optional query parameter', async (t) => {
    const made = openApiDocument(loadSettings({}), [
      dataPart({
        url: URL,
        tag: { name: 'Series', description: 'Series.' },
        operationId: 'getSeries',
        summary: 'A series',
        description: 'A series of a tube.',
        query: Extended,
        ok: {
          description: 'The series.',
          content: {
            'application/json': {
              schema: z.object({ from: z.string() }),
              example: { from: '2024-01-01T00:00:00Z' },
            },
          },
        },
      }),
    ]);
    // As it is served: JSON.
    const document = JSON.parse(JSON.stringify(made));
    const result = await new Validator().validate(document);
    t.same(result.errors ?? [], [], 'a valid OpenAPI document');
    const parameters: {
      name: string;
      in: string;
      required?: boolean;
      description?: string;
      schema: { enum?: string[] };
    }[] = document.paths['/series'].get.parameters;
    t.same(
      parameterList({ parameters }),
      [...INTERVAL_QUERY, ['extra', 'query', false], ...CONDITIONAL],
      'from and to required; aggregate, format, status, include, extra and the conditional headers not',
    );
    const extra = parameters.find((parameter) => parameter.name === 'extra')!;
    t.same(extra.schema.enum, ['one', 'two']);
    t.equal(extra.description, 'An extension, as 1.1 adds `format`.');
  });
});

/**
 * A data endpoint's part of the OpenAPI document, from one description of it: its operation, its
 * request schemas (those its route validates with), its 200 in each format, the problems it answers of
 * its own, and the schemas it names. What every data endpoint shares (the key's problems, the limits'
 * headers, conditional requests; a public one, neither key nor limits) is added here, once.
 */
import { z } from 'zod';
import type { oas31, ZodOpenApiContentObject, ZodOpenApiResponseObject } from 'zod-openapi';
import { jsonSchemaOf } from '../../domain/jsonSchema.js';
import type { ProblemError } from '../../http/problems/problems.js';
import { listedTubeNotFound } from '../tubesInView.js';
import { ConditionalHeaders, dataResponses, problemExample, problemResponse } from './components.js';
import { type DocumentPart, openApiPath, readOnlyPathItem, type Tag } from './pathItem.js';

/** A problem an endpoint answers of its own: when, and the body the service writes for it. */
export interface OwnProblem {
  description: string;
  problem: ProblemError;
  /** Names the response as a component (`#/components/responses/…`), wherever it is used. */
  id?: string;
}

/** The 404 of an endpoint that takes a list of tubes, for a listed one the key may not read (`sent`). */
export const listedTubeMissing = (sent: string): OwnProblem => ({
  description:
    'A listed tube this key may not read: unknown, malformed and hidden identifiers give the same ' +
    'answer. `detail` names the identifier as it was sent.',
  problem: listedTubeNotFound(sent),
});

export interface DataEndpoint {
  /** The route's URL, as Fastify names it (`/a/:b`). */
  url: string;
  tag: Tag;
  operationId: string;
  summary: string;
  description: string;
  /** The path parameters as documented, and the query schema the route validates with. */
  path?: z.ZodObject;
  query: z.ZodObject;
  /**
   * Whether it answers conditional requests: its 200 carries the validators, it answers 304, and it
   * reads If-None-Match and If-Modified-Since. So unless false.
   */
  conditional?: boolean;
  /** Public: no key (`security: []`) and no limit, like this document. Not unless true. */
  public?: boolean;
  /** The 200: when, its headers besides the ones every data response has, its body in each format. */
  ok: {
    description: string;
    headers?: Record<string, oas31.HeaderObject>;
    content: ZodOpenApiContentObject;
  };
  /** Its own problems, by status. */
  problems?: Partial<Record<'400' | '404' | '410', OwnProblem>>;
  /** The schemas it names, each a component (`#/components/schemas/…`) wherever it is used. */
  schemas?: Record<string, z.ZodType>;
}

export function dataPart(endpoint: DataEndpoint): DocumentPart {
  const { url, tag, path, query, conditional = true, public: open = false, ok, problems = {} } = endpoint;
  const own = Object.entries(problems).map(([status, { description, problem, id }]) => {
    const response: ZodOpenApiResponseObject = problemResponse(description, [], problemExample(problem, url));
    return [status, id ? { id, ...response } : response];
  });
  return {
    tag,
    paths: {
      [openApiPath(url)]: readOnlyPathItem({
        operationId: endpoint.operationId,
        tags: [tag.name],
        summary: endpoint.summary,
        description: endpoint.description,
        ...(open && { security: [] }),
        requestParams: { ...(path && { path }), query, ...(conditional && { header: ConditionalHeaders }) },
        responses: {
          ...dataResponses(ok.description, ok.content, { conditional, public: open, headers: ok.headers }),
          ...Object.fromEntries(own),
        },
      }),
    },
    ...(endpoint.schemas && { schemas: endpoint.schemas }),
  };
}

/** Content-Disposition of a response a client may save: the file name it gets, with an example. */
export const fileNameHeader = (description: string, example: string): oas31.HeaderObject => ({
  description,
  schema: jsonSchemaOf(z.string().meta({ examples: [example] })),
});

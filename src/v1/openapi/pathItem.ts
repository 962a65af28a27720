/**
 * What an endpoint contributes to the OpenAPI document (its openapi.ts): its path item, made from the
 * zod schemas that validate its request and write its response. zod-openapi turns them into OpenAPI:
 * each query parameter from the route's query schema, required unless optional or defaulted.
 */
import type { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathItemObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { problemRefs } from './components.js';

export interface DocumentPart {
  paths: ZodOpenApiPathsObject;
  /** The schemas the part names, each a component (`#/components/schemas/…`) wherever it is used. */
  schemas?: Record<string, z.ZodType>;
}

/** `/a/:b/c` → `/a/{b}/c`: OpenAPI names path parameters in braces. */
export const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

type Operation = ZodOpenApiOperationObject & { operationId: string; summary: string };

/**
 * GET with its HEAD twin (same parameters, statuses and headers, no body), plus 405 for every other
 * method. A response named by an `id` (a component) or a `$ref` is the same for HEAD.
 */
export function readOnlyPathItem(get: Operation): ZodOpenApiPathItemObject {
  const headResponses = Object.fromEntries(
    Object.entries(get.responses).map(([status, response]) => {
      if (typeof response !== 'object' || response === null || '$ref' in response || response.id) {
        return [status, response];
      }
      const { content: _body, ...withoutBody } = response;
      return [status, withoutBody];
    }),
  );
  const notSupported = {
    summary: 'Not supported: the API is read-only',
    security: [],
    responses: problemRefs('MethodNotAllowed'),
  };
  return {
    get,
    head: {
      ...get,
      operationId: `${get.operationId}Head`,
      summary: `${get.summary} (headers only)`,
      responses: headResponses,
    },
    put: notSupported,
    post: notSupported,
    delete: notSupported,
    options: notSupported,
    patch: notSupported,
    trace: notSupported,
  };
}
